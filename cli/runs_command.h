#pragma once
// ringmaster-runs: the run directories from a terminal, without the app.
//   list [--root DIR]... [--json]                     the runs under the roots (default: the configured
//                                                     output root, runs_default_root.h)
//   export RUN... --out FILE [--format csv|json]      every scalar of the runs in one long table
//   bundle RUN --out FILE.tar.gz [--with-checkpoints] [--with-model]
//   plot RUN... --out FILE.png|.svg|.pdf [...]        the app's chart (runs_plot_command.h: needs widgets,
//                                                     so it is handed in by the program that links them)
// Bad input (an unknown subcommand or flag, a missing value, a folder that is not a run, an output that
// cannot be written) is one line on stderr naming the problem and the fix, exit 2, and no file created.

#include <QStringList>
#include <QTextStream>

#include <functional>

namespace ringmaster::cli {

inline constexpr int kRunsExitOk = 0;
inline constexpr int kRunsExitUsage = 2;

QString runsUsage();

// A subcommand given its arguments (after its name); returns the exit code; may throw runs::RunsError.
using RunsSubcommand = std::function<int(const QStringList& arguments, QTextStream& out, QTextStream& err)>;

// ARGUMENTS excludes the program name. Returns the exit code. PLOT runs `plot` (without one, plot is bad input).
int runRunsCommand(const QStringList& arguments, QTextStream& out, QTextStream& err, const RunsSubcommand& plot = {});

} // namespace ringmaster::cli
