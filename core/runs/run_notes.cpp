#include "run_notes.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include "run_files.h"

namespace ringmaster::runs {
namespace {

constexpr const char* kTitleKey = "title";
constexpr const char* kNotesKey = "notes";

} // namespace

RunNotes readRunNotes(const QString& dir, QStringList* problems)
{
    RunNotes result;
    QFile file(QDir(dir).filePath(QString::fromLatin1(kNotesFile)));
    if (!file.exists()) return result;
    if (!file.open(QIODevice::ReadOnly)) {
        if (problems) *problems << QStringLiteral("notes.json cannot be read: %1").arg(file.errorString());
        return result;
    }
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        if (problems) *problems << QStringLiteral("notes.json is not valid JSON (%1)")
                                       .arg(error.error != QJsonParseError::NoError ? error.errorString() : QStringLiteral("not an object"));
        return result;
    }
    result.title = document.object().value(QLatin1String(kTitleKey)).toString();
    result.notes = document.object().value(QLatin1String(kNotesKey)).toString();
    return result;
}

void writeRunNotes(const QString& dir, const RunNotes& notes)
{
    requireRunDirectory(dir);
    const QString path = QDir(dir).filePath(QString::fromLatin1(kNotesFile));
    const QJsonObject object{{QLatin1String(kTitleKey), notes.title.trimmed()}, {QLatin1String(kNotesKey), notes.notes}};
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        throw RunsError(QStringLiteral("%1: cannot write it (%2): check the run folder's permissions").arg(path, file.errorString()));
    }
    file.write(QJsonDocument(object).toJson(QJsonDocument::Indented));
    if (!file.commit()) {
        throw RunsError(QStringLiteral("%1: writing failed (%2): check free space and permissions").arg(path, file.errorString()));
    }
}

} // namespace ringmaster::runs
