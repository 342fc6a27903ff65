#include "runs/run_notes.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>

#include <functional>

#include "runs/run_files.h"

namespace ringmaster::runs {
namespace {

constexpr const char* kTitleKey = "title";
constexpr const char* kNotesKey = "notes";
constexpr const char* kColourKey = "colour";

bool isColour(const QString& text)
{
    static const QRegularExpression hex(QStringLiteral("^#[0-9a-fA-F]{6}$"));
    return hex.match(text).hasMatch();
}

// The object in DIR/notes.json now (empty when there is none or it is unreadable: it is rewritten whole).
QJsonObject currentObject(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

void writeObject(const QString& dir, const std::function<void(QJsonObject*)>& change)
{
    requireRunDirectory(dir);
    const QString path = QDir(dir).filePath(QString::fromLatin1(kNotesFile));
    QJsonObject object = currentObject(path);
    change(&object);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        throw RunsError(QStringLiteral("%1: cannot write it (%2): check the run folder's permissions").arg(path, file.errorString()));
    }
    file.write(QJsonDocument(object).toJson(QJsonDocument::Indented));
    if (!file.commit()) {
        throw RunsError(QStringLiteral("%1: writing failed (%2): check free space and permissions").arg(path, file.errorString()));
    }
}

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
    const QString colour = document.object().value(QLatin1String(kColourKey)).toString();
    if (isColour(colour)) {
        result.colour = colour.toLower();
    } else if (!colour.isEmpty() && problems) {
        *problems << QStringLiteral("notes.json: colour \"%1\" is not #rrggbb (choose the run's colour again)").arg(colour);
    }
    return result;
}

void writeRunNotes(const QString& dir, const RunNotes& notes)
{
    writeObject(dir, [&notes](QJsonObject* object) {
        object->insert(QLatin1String(kTitleKey), notes.title.trimmed());
        object->insert(QLatin1String(kNotesKey), notes.notes);
    });
}

void writeRunColour(const QString& dir, const QString& colour)
{
    if (!colour.isEmpty() && !isColour(colour)) {
        throw RunsError(QStringLiteral("colour \"%1\" is not of the form #rrggbb: give one such as #1f77b4").arg(colour));
    }
    writeObject(dir, [&colour](QJsonObject* object) {
        if (colour.isEmpty()) object->remove(QLatin1String(kColourKey));
        else object->insert(QLatin1String(kColourKey), colour.toLower());
    });
}

} // namespace ringmaster::runs
