#include "cli/runs_default_root.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>

#include <optional>

#include "supervisor/app_settings.h"
#include "supervisor/job_spec.h"
#include "runs/run_files.h"

namespace ringmaster::cli {

DefaultRunsRoot defaultRunsRoot()
{
    const QSettings settings(QSettings::NativeFormat, QSettings::UserScope, QString::fromLatin1(supervisor::kSettingsOrganization),
                             QString::fromLatin1(supervisor::kSettingsApplication));
    const QByteArray saved = settings.value(QLatin1String(supervisor::kLastJobSettingsKey)).toByteArray();
    if (!saved.isEmpty()) {
        try {
            const supervisor::JobSpec job = supervisor::JobSpec::fromJson(QJsonDocument::fromJson(saved).object(), QStringLiteral("the app's last job"));
            if (!job.outputRoot.isEmpty()) {
                return {job.outputRoot, QStringLiteral("the output folder of the app's last job, from %1").arg(settings.fileName())};
            }
        } catch (const supervisor::JobError&) {
            // As the app does: a job it cannot read (saved by another version) leaves the defaults.
        }
    }
    return {QString::fromLatin1(kDefaultRunsRoot), QStringLiteral("the launcher's default output root")};
}

QStringList resolveRunArguments(const QStringList& runs)
{
    std::optional<DefaultRunsRoot> root;   // read only when a bare name needs it
    QStringList resolved;
    for (const QString& run : runs) {
        if (QFileInfo::exists(run) || run.contains(QLatin1Char('/'))) {
            resolved << run;
            continue;
        }
        if (!root) root = defaultRunsRoot();
        const QString candidate = QDir(root->path).filePath(run);
        if (!QFileInfo(candidate).isDir()) {
            throw runs::RunsError(QStringLiteral("%1: no such folder here, nor in %2 (%3): give a run directory, e.g. %4")
                                      .arg(run, root->path, root->origin, QDir(root->path).filePath(QStringLiteral("20261130-101500-cnn"))));
        }
        resolved << candidate;
    }
    return resolved;
}

} // namespace ringmaster::cli
