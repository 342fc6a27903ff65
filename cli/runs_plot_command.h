#pragma once
// `ringmaster-runs plot RUN... --out FILE.png|.svg|.pdf [--metric NAME]... [--x step|time] [--smoothing F]
// [--size W,H]`: every scalar of the runs (core/runs, the records `export` writes) drawn by the app's chart
// (ui/charts/run_plot.h) into a picture. A library of its own (ringmaster::runs_plot_cli) because it links
// widgets (the charts library only, never the app's window or form), which list/export/bundle do not need: ringmaster-runs hands it to runRunsCommand and builds a
// QApplication only for it. Every argument is checked before anything is read or written; bad input is a
// runs::RunsError (one line, exit 2, no file).

#include <QStringList>
#include <QTextStream>

namespace ringmaster::cli {

inline constexpr const char* kPlotCommand = "plot";

// Needs a QApplication. Returns the exit code; throws runs::RunsError on bad input.
int runsPlotCommand(const QStringList& arguments, QTextStream& out, QTextStream& err);

} // namespace ringmaster::cli
