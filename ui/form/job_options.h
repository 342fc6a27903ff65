#pragma once
// Reading a job file's trainer values as the job form shows them. The file may hold a number as a
// number or as text (the launcher passes flags on as text), and whole numbers must stay exact (a seed
// of 1234567 stays 1234567, not 1.23457e+06), so each reader takes both and falls back when neither fits.

#include <QJsonObject>
#include <QString>

namespace ringmaster::ui {

// A whole number, exactly.
qint64 integerOption(const QJsonObject& trainer, const char* key, qint64 fallback);
double realOption(const QJsonObject& trainer, const char* key, double fallback);
// Text; a number as the shortest text that reads back as the same double (0.0123456789, not 0.0123457).
QString textOption(const QJsonObject& trainer, const char* key, const QString& fallback);
// true or "true".
bool boolOption(const QJsonObject& trainer, const char* key);

} // namespace ringmaster::ui
