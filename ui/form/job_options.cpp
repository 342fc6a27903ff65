#include "ui/form/job_options.h"

#include <QJsonValue>
#include <QLocale>

#include <cmath>
#include <limits>

namespace ringmaster::ui {

// A whole number from the job file, exactly (a seed of 1234567 stays 1234567).
qint64 integerOption(const QJsonObject& trainer, const char* key, qint64 fallback)
{
    const QJsonValue value = trainer.value(QLatin1String(key));
    if (value.isString()) {
        bool ok = false;
        const qint64 parsed = value.toString().trimmed().toLongLong(&ok);
        return ok ? parsed : fallback;
    }
    if (!value.isDouble()) return fallback;
    const qint64 exact = value.toInteger(std::numeric_limits<qint64>::min());
    return exact != std::numeric_limits<qint64>::min() ? exact : std::llround(value.toDouble());
}

double realOption(const QJsonObject& trainer, const char* key, double fallback)
{
    const QJsonValue value = trainer.value(QLatin1String(key));
    if (value.isString()) {
        bool ok = false;
        const double parsed = value.toString().trimmed().toDouble(&ok);
        return ok ? parsed : fallback;
    }
    return value.isDouble() ? value.toDouble() : fallback;
}

QString textOption(const QJsonObject& trainer, const char* key, const QString& fallback)
{
    const QJsonValue value = trainer.value(QLatin1String(key));
    if (value.isString()) return value.toString();
    // The shortest text that reads back as the same double (0.0123456789, not 0.0123457).
    if (value.isDouble()) return QString::number(value.toDouble(), 'g', QLocale::FloatingPointShortest);
    return fallback;
}

bool boolOption(const QJsonObject& trainer, const char* key)
{
    const QJsonValue value = trainer.value(QLatin1String(key));
    return value.isBool() ? value.toBool() : value.toString() == QLatin1String("true");
}

} // namespace ringmaster::ui
