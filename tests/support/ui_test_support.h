#pragma once
// What the GUI tests (tests/ui) share, once: writing and reading the files a test makes, a screenshot when
// RINGMASTER_SCREENSHOT_DIR asks for one, and waiting on the window, the form and the Runs tab without sleeping
// (each wait polls the state it names, up to a bound, and says whether it came).

#include <QByteArray>
#include <QJsonObject>
#include <QString>

class QWidget;

namespace ringmaster::ui {
class JobForm;
class MainWindow;
class RunsPanel;
}

namespace ringmaster::ui::test {

// Writes BYTES to PATH (executable when asked); returns PATH, or empty with the current test marked failed.
QString writeFile(const QString& path, const QByteArray& bytes, bool executable = false);
// PATH's JSON object, or an empty one when it cannot be read.
QJsonObject readJson(const QString& path);
// WIDGET grabbed into $RINGMASTER_SCREENSHOT_DIR/NAME when that variable is set (the README's pictures).
void screenshot(QWidget& widget, const char* name);
// Until the window's run is in a final state (completed, failed, stopped), at most TIMEOUT_MS.
bool waitForFinal(MainWindow& window, int timeoutMs);
// Until the form has no check in flight (the probe, the output folder, Slurm's answers), at most TIMEOUT_MS.
bool settled(JobForm& form, int timeoutMs);
// The Runs tab lists the runs again; true once it has said so (within TIMEOUT_MS).
bool refreshAndWait(RunsPanel& panel, int timeoutMs);
// The text of COLUMN (the Status column by default) in RUN_DIR's row of the Runs tab, empty when not listed.
QString statusOf(const RunsPanel& panel, const QString& runDir, int column = -1);

} // namespace ringmaster::ui::test
