#pragma once
// One export from the Runs tab (scalars, a bundle, a chart, a copied model or checkpoint) run off the GUI
// thread (QtConcurrent, progress reported through QPromise) behind a QProgressDialog, so a large bundle
// never freezes the window. The work writes atomically (core/runs writes through QSaveFile; a copy goes
// through one here), so a failure leaves no partial file; it throws runs::RunsError with one line naming the
// file and the fix, which finished() carries and the runner shows in one message box (unless told not to).
// An existing target is replaced only after the injectable confirmation says yes (the file dialogs are
// opened with DontConfirmOverwrite so the question is asked once, here, also for paths given in code).

#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QPromise>
#include <QString>

#include <functional>

class QProgressDialog;
class QWidget;

namespace ringmaster::ui {

// What the worker hands back: a one-line summary, and optionally a last step that must run on the GUI
// thread (a chart is drawn by widgets), returning the summary instead; either may throw runs::RunsError.
struct ExportOutcome
{
    bool ok = false;
    QString message;
    std::function<QString()> finishOnGuiThread;
};

class ExportRunner : public QObject
{
    Q_OBJECT

public:
    // Returns the summary; report progress with promise.setProgressRange / setProgressValue.
    using Work = std::function<ExportOutcome(QPromise<ExportOutcome>& promise)>;
    using ConfirmOverwrite = std::function<bool(const QString& path)>;

    explicit ExportRunner(QWidget* dialogParent);

    // Asks before replacing an existing file (default: a Yes/No box, No preselected).
    void setConfirmOverwrite(ConfirmOverwrite confirm) { m_confirm = std::move(confirm); }
    // Off: failures and refusals are not shown in a box (tests read finished()'s message).
    void setShowMessages(bool show) { m_showMessages = show; }

    // Starts WORK writing TARGET; false (finished() not emitted) when one export is running already or
    // when TARGET exists and replacing it was refused. TITLE labels the progress dialog ("Bundle").
    bool start(const QString& title, const QString& target, Work work);
    bool isRunning() const { return m_watcher.isRunning(); }
    QString lastMessage() const { return m_lastMessage; }

    // The overwrite check on its own (true when TARGET is absent or the user agreed).
    bool mayWrite(const QString& target);

    // Copies SOURCE to TARGET through a temp file in TARGET's folder (QSaveFile), reporting bytes copied.
    // Throws runs::RunsError naming the file that cannot be read or written.
    static void copyFileAtomically(const QString& source, const QString& target, QPromise<ExportOutcome>* promise);

Q_SIGNALS:
    void finished(bool ok, const QString& message);

private:
    void onFinished();
    void report(bool ok, const QString& message);

    QPointer<QWidget> m_parent;
    QFutureWatcher<ExportOutcome> m_watcher;
    QProgressDialog* m_progress = nullptr;
    ConfirmOverwrite m_confirm;
    QString m_title;
    QString m_lastMessage;
    bool m_showMessages = true;
};

} // namespace ringmaster::ui
