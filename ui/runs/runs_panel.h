#pragma once
// The "Runs" tab: every run directory under the output root the job form uses (and any folder added with
// *Add folder…*), as the sortable, filterable table of RunsModel. Listing reads one small index per run
// (core/runs) on a worker thread (QtConcurrent), so a thousand runs never freeze the window; a refresh
// asked for while one is reading runs once more when it ends. The main window calls setActiveRun when a
// run starts (it appears, as "running") and again with "" when it ends (it updates).
// Rename and notes are kept in the run directory (core/runs run_notes.h). Delete asks first and refuses
// the run that is running now. Open (double-click) and Compare (several rows) read the runs' scalars
// (core/runs scalar_table.h), also off the GUI thread, into this tab's own ScalarChart, one overlaid run
// per label, and show the run's summary, and the first run's logs in the tab's own log view: the live run
// keeps the "All scalars" chart and the Logs tab to itself. A run Slurm still holds (submitted, no final
// status yet) shows Slurm's word for it, "queued" or "running" (SlurmQueueStates asks Slurm apart from the
// listing, which never waits for it); opening such a run hands it to the window to follow live
// (setFollowHandler), and it cannot be deleted meanwhile.
// Each row's tick says whether the run is in the chart: ticking or unticking runs overlays or removes
// their curves (Open and Compare tick exactly the runs they open). Compare draws each run in its own colour (run_colours.h: the user's, kept in notes.json, or one derived
// from the folder's name), the same at every refresh and re-open; the table's swatch shows it and the
// table's context menu changes it (Colour…, Automatic colour). The Hyperparameters tab beside the chart
// lists the job.json settings that differ between the opened runs (HyperparameterTable), read with the
// scalars off the GUI thread. The chart's "wall time" axis counts from each run's own first point, so
// runs started on different days overlay.
// An opened run shows what a live run shows, from its files: the chart, the Evaluation tab (eval.csv, as
// the main window's EvalTable), the logs and the summary; a damaged run (a cut-short CSV, no summary.json)
// shows what could be read and a red line above the tabs saying what could not (problemsBanner).
// The list follows runs started elsewhere (ringmaster-launch in a terminal) without Refresh: RunsFolderWatch
// notices a new run folder in a root or a summary.json written, and the tab lists again.
// Its widgets and connections are made in runs_panel_parts.cpp; what it does with runs in runs_panel.cpp.

#include <QColor>
#include <QFutureWatcher>
#include <QHash>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <map>

#include "runs/job_diff.h"
#include "runs/opened_run.h"
#include "runs/run_notes.h"
#include "runs/run_record.h"
#include "runs/scalar_table.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QTabWidget;
class QTableView;

namespace ringmaster::ui {

class RunsFilterProxy;
class EvalTable;
class HyperparameterTable;
class LogPanel;
class RunsModel;
class RunActions;
class RunsFolderWatch;
class ScalarChart;
class SlurmQueueStates;
class SystemPanel;

class RunsPanel : public QWidget
{
    Q_OBJECT

public:
    explicit RunsPanel(QWidget* parent = nullptr);
    ~RunsPanel() override;

    // Where the job form puts new runs, asked at each refresh (it changes as the form is edited).
    void setOutputRootProvider(std::function<QString()> provider) { m_outputRoot = std::move(provider); }
    // Follows a run that Slurm still runs (the window attaches to it); false when it cannot, and the run
    // is opened in this tab's chart instead.
    void setFollowHandler(std::function<bool(const QString&)> follow) { m_follow = std::move(follow); }
    // Another folder of runs to list (kept for the session).
    void addRoot(const QString& folder);
    // The folders listed now: the output root first, then those added; only those that exist.
    QStringList roots() const;

    // Asks before deleting (the default); tests turn it off to delete without a dialog.
    void setConfirmDeletes(bool confirm) { m_confirmDeletes = confirm; }

    RunsModel* model() const { return m_model; }
    RunsFilterProxy* proxy() const { return m_proxy; }
    QTableView* table() const { return m_table; }
    QLineEdit* filterEdit() const { return m_filter; }
    ScalarChart* chart() const { return m_chart; }
    LogPanel* logs() const { return m_logs; }
    HyperparameterTable* hyperparameters() const { return m_hyperparameters; }
    // The evaluations of the run opened (of the first run, when comparing).
    EvalTable* evalTable() const { return m_evals; }
    SystemPanel* systemPanel() const { return m_system; }
    // The line above the tabs naming what an opened run lacks (hidden when everything was read).
    QLabel* problemsBanner() const { return m_problemsBanner; }
    // What tells the tab that runs changed outside this window.
    RunsFolderWatch* folderWatch() const { return m_folderWatch; }
    QTabWidget* detailTabs() const { return m_detailTabs; }
    // The Actions menu (resume, new job, exports) on the selected runs.
    RunActions* actions() const { return m_actions; }
    QLabel* summaryLabel() const { return m_summary; }
    QLabel* statusLabel() const { return m_status; }
    // Slurm's state of the listed runs it still holds (the tests point it at stub tools).
    SlurmQueueStates* queueStates() const { return m_queue; }
    bool isRefreshing() const { return m_listing.isRunning(); }
    // The run directories of the selected rows, in table order; selectRuns selects exactly these.
    QStringList selectedRuns() const;
    void selectRuns(const QStringList& paths);
    // The run directories open in the chart now (the last Open or Compare), once they are read.
    const QStringList& openRuns() const { return m_openRuns; }

public Q_SLOTS:
    // Lists the runs again, off the GUI thread.
    void refresh();
    // RUN_DIR is being written by the live run ("" when no run is active); both refresh the list.
    void setActiveRun(const QString& runDir);
    // Writes the run's notes.json and lists it again; false (with the reason in the status line) when it cannot.
    bool saveNotes(const QString& runDir, const runs::RunNotes& notes);
    // Deletes the run directory after asking (see setConfirmDeletes); refuses the running run, a folder
    // that is not a listed run, and a "No". True when it was deleted.
    bool deleteRun(const QString& runDir);
    // Open: a run Slurm still runs is followed live (setFollowHandler), any other is drawn in this tab's chart.
    void openRun(const QString& runDir);
    // Reads the runs' scalars off the GUI thread and draws them overlaid in this tab's chart.
    void openRunsInChart(const QStringList& runDirs);
    // Keeps COLOUR as the run's colour (its notes.json; an invalid colour: back to the automatic one) and
    // lists it again, which redraws the open comparison in it; false (the reason in the status line) when it cannot.
    bool saveRunColour(const QString& runDir, const QColor& colour);
    // Asks for the selected run's colour (QColorDialog) and saves it.
    void chooseColourOfSelected();

Q_SIGNALS:
    // The list was read again (the model holds it).
    void refreshed();
    // openRunsInChart's runs are drawn.
    void runsOpened(const QStringList& runDirs);

protected:
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;

private:
    // The constructor's named parts (runs_panel_parts.cpp).
    QWidget* buildRunList();
    QWidget* buildRunDetails();
    void connectBackground();

    struct Listing
    {
        QList<runs::RunRecord> runs;
        QString error;
        QHash<QString, QString> slurmJobs;   // run directory -> Slurm job, for the runs Slurm may still run
        QStringList watch;                     // the folders to watch for changes made elsewhere
        QHash<QString, QByteArray> signatures; // of the folders watched, taken before the runs were read
    };
    void onListed();
    void onOpened();
    void updateButtons();
    void renameSelected();
    void editNotesOfSelected();
    void deleteSelected();
    void addFolder();
    void showSummary(const QList<runs::RunRecord>& runs);
    void showProblems(const QList<runs::RunRecord>& runs);
    const runs::RunRecord* recordOf(const QString& path) const;
    // Gives the open comparison's runs their colours (chart and Hyperparameters header) where they changed.
    void applyCompareColours();
    void showTableMenu(const QPoint& position);

    RunsModel* m_model;
    RunsFilterProxy* m_proxy;
    QTableView* m_table;
    QLineEdit* m_filter;
    QLabel* m_status;
    QLabel* m_summary;
    ScalarChart* m_chart;
    LogPanel* m_logs;
    HyperparameterTable* m_hyperparameters;
    EvalTable* m_evals;
    SystemPanel* m_system;
    QLabel* m_problemsBanner;
    QTabWidget* m_detailTabs;
    QPushButton* m_open;
    QPushButton* m_compare;
    QPushButton* m_rename;
    QPushButton* m_notes;
    QPushButton* m_delete;
    RunActions* m_actions;
    SlurmQueueStates* m_queue;
    RunsFolderWatch* m_folderWatch;
    std::function<bool(const QString&)> m_follow;
    std::function<QString()> m_outputRoot;
    QStringList m_addedRoots;
    QFutureWatcher<Listing> m_listing;
    QFutureWatcher<QList<runs::OpenedRun>> m_opening;
    QTimer m_reopenTicked;
    QStringList m_openingPaths;
    QStringList m_openRuns;
    QStringList m_openLabels;            // their labels in the chart
    QList<runs::RunJob> m_openJobs;
    QList<QColor> m_openColours;         // as drawn; empty when one run is open (its scalars take the cycle)
    bool m_refreshAgain = false;
    bool m_listedOnce = false;
    bool m_confirmDeletes = true;
};

} // namespace ringmaster::ui
