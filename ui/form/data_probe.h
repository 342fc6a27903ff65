#pragma once
// Asks ringmaster-trainer what a job's data and model are, without training: `TRAINER FLAGS --probe`
// prints one JSON line (format, sample counts, classes, input shape; the model's parameters, output
// shape and loss) or, for bad input, one "ringmaster-trainer: error: MESSAGE" line and exit 2.
// DataProbe runs that as a QProcess on the GUI thread's event loop, never waiting on it: a newer
// probe kills the older one, and a watchdog kills a probe that does not answer in time and says so.
// The summary functions turn the JSON into the one-line texts the job form shows under its rows.

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

class QProcess;

namespace ringmaster::ui {

// A trainer must answer a probe in this time: it reads the data (decoding images once into the
// per-machine cache, which the run then reuses) and runs the model on one batch.
inline constexpr int kProbeTimeoutMs = 60000;

struct ProbeOutcome
{
    enum class Kind {
        None,        // no probe has answered for the form's current fields
        Answered,    // exit 0 with the JSON line: report holds it
        Rejected,    // exit 2: message is the trainer's error line (bad input)
        Unsupported, // this trainer cannot probe (not found, or it does not know --probe): checked at Start
        Failed,      // it crashed, exited otherwise, or printed no JSON
        TimedOut,    // the watchdog killed it
    };
    Kind kind = Kind::None;
    QJsonObject report; // {"data": {...}, "model": {...}}
    QString message;

    bool answered() const { return kind == Kind::Answered; }
    // A rejection that is about the model (the message names --model), not the data.
    bool concernsModel() const;
    // The probe's training sample count; -1 when it did not answer.
    qint64 trainSamples() const;
};

class DataProbe : public QObject
{
    Q_OBJECT

public:
    explicit DataProbe(QObject* parent = nullptr);
    ~DataProbe() override; // kills a probe still running: none outlives the form

    // Runs `trainer arguments` (the arguments end with --probe); a probe still running is killed and
    // its result never delivered. A trainer that is missing is answered at once (Unsupported).
    void start(const QString& trainer, const QStringList& arguments);
    // Kills the running probe, if any; nothing is delivered for it.
    void cancel();
    bool isRunning() const { return m_process != nullptr; }
    // The running probe's process id (0 when none), for the tests.
    qint64 processId() const;
    void setTimeoutMs(int milliseconds) { m_watchdog.setInterval(milliseconds); }

Q_SIGNALS:
    void finished(const ringmaster::ui::ProbeOutcome& outcome);

private:
    void onFinished(int exitCode, bool crashed);
    void onTimeout();
    void deliver(const ProbeOutcome& outcome);

    QProcess* m_process = nullptr; // the probe whose result counts
    QString m_trainer;
    QTimer m_watchdog;
};

// "image folder · 1,200 training + 300 validation samples · 2 classes (cat, dog) · 3×32×32"
QString dataSummary(const QJsonObject& data);
// "cnn · 123,456 parameters · output [64, 2] · loss cross_entropy"
QString modelSummary(const QJsonObject& model);

} // namespace ringmaster::ui
