#include "supervisor/trusted_programs.h"

#include <QFile>
#include <QFileInfo>
#include <QSettings>

#include <sys/stat.h>

#include "supervisor/app_settings.h"
#include "supervisor/job_spec.h"
#include "supervisor/preflight.h"

namespace ringmaster::supervisor {
namespace {

QSettings settings()
{
    return QSettings(QLatin1String(kSettingsOrganization), QLatin1String(kSettingsApplication));
}

QStringList remembered(const char* key)
{
    return settings().value(QLatin1String(key)).toStringList();
}

void remember(const char* key, const QString& path)
{
    const QString canonical = QFileInfo(path).canonicalFilePath();
    if (canonical.isEmpty()) return;
    QStringList list = remembered(key);
    list.removeAll(canonical);
    list.prepend(canonical);
    while (list.size() > kMaxTrustedPrograms) list.removeLast();
    QSettings store = settings();
    store.setValue(QLatin1String(key), list);
    store.sync();
}

bool matchesAny(const QString& path, const QStringList& candidates)
{
    for (const QString& candidate : candidates) {
        if (!candidate.isEmpty() && sameFile(path, candidate)) return true;
    }
    return false;
}

} // namespace

bool sameFile(const QString& a, const QString& b)
{
    struct stat first {};
    struct stat second {};
    if (::stat(QFile::encodeName(a).constData(), &first) != 0 || ::stat(QFile::encodeName(b).constData(), &second) != 0) return false;
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino;
}

QStringList rememberedTrainers() { return remembered(kTrustedTrainersKey); }
QStringList rememberedInterpreters() { return remembered(kTrustedInterpretersKey); }
void rememberTrainer(const QString& path) { remember(kTrustedTrainersKey, path); }
void rememberInterpreter(const QString& path) { remember(kTrustedInterpretersKey, path); }

bool isTrustedTrainer(const QString& path)
{
    return matchesAny(path, QStringList{locateTrainer(JobSpec{})} + rememberedTrainers());
}

bool isTrustedInterpreter(const QString& path)
{
    return matchesAny(path, QStringList{locateInterpreter(QString::fromLatin1(kDefaultPython))} + rememberedInterpreters());
}

} // namespace ringmaster::supervisor
