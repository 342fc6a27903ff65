#pragma once
// The folder of runs ringmaster-runs uses when none is given (`list` without --root; a bare run name given
// to export, bundle or plot): the configured output root. That is the output folder of the last job the
// desktop app started (its form and its Runs tab use it; read from the app's settings, app_settings.h), else
// the launcher's default --output-root, "runs". A relative root is taken from the current folder, as the
// launcher takes it.

#include <QString>
#include <QStringList>

namespace ringmaster::cli {

inline constexpr const char* kDefaultRunsRoot = "runs";   // the launcher's default --output-root

struct DefaultRunsRoot
{
    QString path;     // as configured: "runs", "/data/runs"
    QString origin;   // where it came from, for messages: "the app's output folder, from FILE"
};

DefaultRunsRoot defaultRunsRoot();

// Each RUN as given when it exists or names a path (holds '/'); a bare name that is not a folder here is
// looked up in the default root (ROOT/NAME). A bare name found in neither is a RunsError naming both.
QStringList resolveRunArguments(const QStringList& runs);

} // namespace ringmaster::cli
