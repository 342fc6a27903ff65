#pragma once
// The Runs tab's *Actions* menu on the selected runs: Resume from a checkpoint… and New job from this run
// (signals the main window acts on: it owns the form and the supervisor), and the exports
// `ringmaster-runs` offers, from the app: scalars of the ticked runs (the runs in the tab's chart; the
// selected ones when none is ticked) as CSV or JSON, a chart of the same runs as PNG/SVG/PDF at a chosen
// size (ui/charts/run_plot.h), the selected run's bundle (with or without checkpoints and model.pt), and its
// model.pt or a picked checkpoint copied out. Each export runs through an
// ExportRunner (export_job.h: off the GUI thread, progress dialog, atomic, asks before replacing a file).
// The menu items open file dialogs; the export*() methods take the paths directly (tests, scripts).

#include <QSize>
#include <QStringList>
#include <QWidget>

#include <functional>

#include "runs/run_bundle.h"
#include "runs/scalar_export.h"

class QMenu;
class QPushButton;

namespace ringmaster::ui {

class ExportRunner;

class RunActions : public QWidget
{
    Q_OBJECT

public:
    // SELECTION: the selected run directories; ACTIVE_RUN: the run being written now ("" when none).
    RunActions(std::function<QStringList()> selection, std::function<QString()> activeRun, QWidget* parent = nullptr);
    // The ticked runs, which the scalar and chart exports take when there are any.
    void setTickedRuns(std::function<QStringList()> ticked) { m_ticked = std::move(ticked); }
    // The runs the scalar and chart exports take now: the ticked ones, else the selected ones.
    QStringList exportedRuns() const;
    // Asks where to write (title, suggested name, filter; "" when cancelled): a file dialog unless replaced (tests).
    using SavePathAsker = std::function<QString(const QString& title, const QString& suggested, const QString& filter)>;
    void setSavePathAsker(SavePathAsker asker) { m_askSavePath = std::move(asker); }

    ExportRunner* runner() const { return m_runner; }
    QMenu* menu() const { return m_menu; }
    QPushButton* button() const { return m_button; }

    // Each starts one export off the GUI thread; false when it did not start (a refused overwrite, one
    // already running, bad input: see runner()->lastMessage()). runner()->finished() tells the outcome.
    bool exportScalars(const QStringList& runDirs, const QString& path, runs::ExportFormat format);
    bool exportBundle(const QString& runDir, const QString& path, const runs::BundleOptions& options);
    bool exportChart(const QStringList& runDirs, const QString& path, const QSize& size);
    bool copyOut(const QString& file, const QString& path);

    // Enables the menu's items for the selection now (done each time the menu opens).
    void updateMenu();
    QAction* resumeAction() const { return m_resume; }
    QAction* newJobAction() const { return m_newJob; }
    QAction* scalarsAction() const { return m_scalars; }
    QAction* chartAction() const { return m_chart; }

    // Why RUN_DIR cannot be resumed now ("" when it can): the running run, a completed run, no checkpoint.
    QString resumeRefusal(const QString& runDir) const;

Q_SIGNALS:
    void resumeRequested(const QString& runDir, const QString& checkpoint);
    void newJobRequested(const QString& runDir);

private:
    void resumeSelected();
    void exportScalarsSelected();
    void bundleSelected();
    void chartSelected();
    void copyModelSelected();
    void copyCheckpointSelected();
    QString askSavePath(const QString& title, const QString& suggested, const QString& filter);

    std::function<QStringList()> m_selection;
    std::function<QString()> m_activeRun;
    std::function<QStringList()> m_ticked;
    SavePathAsker m_askSavePath;
    ExportRunner* m_runner;
    QPushButton* m_button;
    QMenu* m_menu;
    QAction* m_resume;
    QAction* m_newJob;
    QAction* m_scalars;
    QAction* m_bundle;
    QAction* m_chart;
    QAction* m_copyModel;
    QAction* m_copyCheckpoint;
};

} // namespace ringmaster::ui
