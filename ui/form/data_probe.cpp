#include "ui/form/data_probe.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QProcess>

#include <csignal>

#include <sys/prctl.h>

#include "protocol/exit_codes.h"

namespace ringmaster::ui {
namespace {

const char* const kErrorPrefix = "ringmaster-trainer: error: ";
// A long class list would crowd the line: the first few, then "…".
constexpr int kClassesShown = 5;
constexpr int kMillisecondsPerSecond = 1000;
constexpr int kReapWaitMs = 1000;

// The last line of a process's output that says something.
QString lastLine(const QByteArray& output)
{
    const QStringList lines = QString::fromUtf8(output).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
        if (const QString line = it->trimmed(); !line.isEmpty()) return line;
    }
    return {};
}

// The JSON line among whatever else the trainer printed (a log line before it, say).
QJsonObject reportIn(const QByteArray& output)
{
    const QList<QByteArray> lines = output.split('\n');
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
        const QByteArray line = it->trimmed();
        if (!line.startsWith('{')) continue;
        const QJsonDocument document = QJsonDocument::fromJson(line);
        if (document.isObject()) return document.object();
    }
    return {};
}

QString number(qint64 value)
{
    return QLocale(QLocale::English).toString(value); // 1,200: the same grouping in every locale and test
}

QString formatName(const QString& format)
{
    if (format == QLatin1String("idx")) return QStringLiteral("IDX");
    if (format == QLatin1String("image-folder")) return QStringLiteral("image folder");
    if (format == QLatin1String("tensor-file")) return QStringLiteral("tensor file");
    if (format == QLatin1String("csv")) return QStringLiteral("CSV");
    return format;
}

QStringList numbers(const QJsonArray& array)
{
    QStringList parts;
    for (const QJsonValue& value : array) parts << QString::number(value.toInteger());
    return parts;
}

} // namespace

bool ProbeOutcome::concernsModel() const
{
    return kind == Kind::Rejected && message.contains(QStringLiteral("--model"));
}

qint64 ProbeOutcome::trainSamples() const
{
    if (!answered()) return -1;
    return report.value(QStringLiteral("data")).toObject().value(QStringLiteral("train_samples")).toInteger(-1);
}

DataProbe::DataProbe(QObject* parent)
    : QObject(parent)
{
    m_watchdog.setSingleShot(true);
    m_watchdog.setInterval(kProbeTimeoutMs);
    connect(&m_watchdog, &QTimer::timeout, this, &DataProbe::onTimeout);
}

DataProbe::~DataProbe()
{
    cancel();
    // Killed probes not yet reaped: reap them now (SIGKILL was sent, so this is quick).
    for (QProcess* process : findChildren<QProcess*>()) {
        if (process->state() == QProcess::NotRunning) continue;
        process->kill();
        process->waitForFinished(kReapWaitMs);
    }
}

qint64 DataProbe::processId() const
{
    return m_process ? m_process->processId() : 0;
}

void DataProbe::cancel()
{
    m_watchdog.stop();
    if (!m_process) return;
    QProcess* old = m_process;
    m_process = nullptr;
    old->disconnect(this); // its result no longer counts
    // Reaped when it is gone, off this call: SIGKILL cannot be ignored, so that is soon.
    connect(old, &QProcess::finished, old, &QObject::deleteLater);
    connect(old, &QProcess::errorOccurred, old, [old](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) old->deleteLater();
    });
    if (old->state() == QProcess::NotRunning) old->deleteLater();
    else old->kill();
}

void DataProbe::start(const QString& trainer, const QStringList& arguments)
{
    cancel();
    m_trainer = trainer;
    if (trainer.isEmpty() || !QFileInfo(trainer).isExecutable()) {
        ProbeOutcome outcome;
        outcome.kind = ProbeOutcome::Kind::Unsupported;
        outcome.message = tr("ringmaster-trainer not found%1: the data and model are checked at Start")
                              .arg(trainer.isEmpty() ? QString() : tr(" at %1").arg(trainer));
        Q_EMIT finished(outcome);
        return;
    }
    auto* process = new QProcess(this);
    process->setProgram(trainer);
    process->setArguments(arguments);
    process->setStandardInputFile(QProcess::nullDevice());
    // One process on its own, whatever rank or world this app was started in.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                             "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "RINGMASTER_SOCKET", "RINGMASTER_TOKEN"}) {
        environment.remove(QString::fromLatin1(name));
    }
    process->setProcessEnvironment(environment);
    // Should this app die, the probe goes with it.
    process->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
    // Connected before start: a probe that fails at once still reports.
    connect(process, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        onFinished(exitCode, status == QProcess::CrashExit);
    });
    connect(process, &QProcess::errorOccurred, this, [this, trainer](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return; // the others also end in finished()
        ProbeOutcome outcome;
        outcome.kind = ProbeOutcome::Kind::Unsupported;
        outcome.message = tr("cannot run %1: %2").arg(trainer, m_process ? m_process->errorString() : QString());
        deliver(outcome);
    });
    m_process = process;
    m_watchdog.start();
    process->start();
}

void DataProbe::deliver(const ProbeOutcome& outcome)
{
    m_watchdog.stop();
    if (m_process) m_process->deleteLater();
    m_process = nullptr;
    Q_EMIT finished(outcome);
}

void DataProbe::onFinished(int exitCode, bool crashed)
{
    if (!m_process) return;
    ProbeOutcome outcome;
    outcome.kind = ProbeOutcome::Kind::Failed;
    const QString error = lastLine(m_process->readAllStandardError()).remove(QLatin1String(kErrorPrefix));
    const QByteArray output = m_process->readAllStandardOutput();
    if (crashed) {
        outcome.message = tr("ringmaster-trainer --probe was interrupted: %1").arg(m_process->errorString());
    } else if (exitCode == protocol::kTrainerExitUsage && error.contains(QStringLiteral("--probe"))) {
        outcome.kind = ProbeOutcome::Kind::Unsupported; // an older trainer: "--probe needs a value" or unknown flag
        outcome.message = tr("this ringmaster-trainer cannot probe (%1): the data and model are checked at Start").arg(error);
    } else if (exitCode == protocol::kTrainerExitUsage) {
        outcome.kind = ProbeOutcome::Kind::Rejected;
        outcome.message = error.isEmpty() ? tr("ringmaster-trainer rejected the data or model (exit code %1)").arg(exitCode) : error;
    } else if (exitCode != protocol::kTrainerExitOk) {
        outcome.message = tr("ringmaster-trainer --probe failed (exit code %1)%2")
                              .arg(exitCode).arg(error.isEmpty() ? QString() : QStringLiteral(": ") + error);
    } else if (outcome.report = reportIn(output); outcome.report.isEmpty()) {
        outcome.message = tr("ringmaster-trainer --probe printed no JSON report");
    } else {
        outcome.kind = ProbeOutcome::Kind::Answered;
    }
    deliver(outcome);
}

void DataProbe::onTimeout()
{
    if (!m_process) return;
    ProbeOutcome outcome;
    outcome.kind = ProbeOutcome::Kind::TimedOut;
    outcome.message = tr("ringmaster-trainer --probe did not answer in %1 s and was stopped: the data and model are checked at Start")
                          .arg(double(m_watchdog.interval()) / kMillisecondsPerSecond);
    cancel(); // kills it; its own end is then never delivered
    Q_EMIT finished(outcome);
}

QString dataSummary(const QJsonObject& data)
{
    QStringList parts;
    parts << formatName(data.value(QStringLiteral("format")).toString());
    const qint64 train = data.value(QStringLiteral("train_samples")).toInteger();
    const qint64 validation = data.value(QStringLiteral("val_samples")).toInteger();
    if (validation > 0 && data.value(QStringLiteral("val_source")).toString() != QLatin1String("none")) {
        parts << QObject::tr("%1 training + %2 validation samples").arg(number(train), number(validation));
    } else {
        parts << QObject::tr("%1 training samples").arg(number(train));
    }
    const qint64 classes = data.value(QStringLiteral("class_count")).toInteger();
    if (classes > 0) {
        QStringList names;
        for (const QJsonValue& name : data.value(QStringLiteral("classes")).toArray()) names << name.toString();
        QString text = classes == 1 ? QObject::tr("1 class") : QObject::tr("%1 classes").arg(number(classes));
        if (!names.isEmpty()) {
            const bool more = names.size() > kClassesShown;
            names = names.mid(0, kClassesShown);
            if (more) names << QStringLiteral("…");
            text += QStringLiteral(" (%1)").arg(names.join(QStringLiteral(", ")));
        }
        parts << text;
    } else {
        const QStringList target = numbers(data.value(QStringLiteral("target_shape")).toArray());
        parts << (target.isEmpty() ? QObject::tr("regression targets")
                                   : QObject::tr("regression targets of %1").arg(target.join(QStringLiteral("×"))));
    }
    const QStringList input = numbers(data.value(QStringLiteral("input_shape")).toArray());
    if (input.size() == 1) parts << QObject::tr("%1 features").arg(input.first());
    else if (!input.isEmpty()) parts << input.join(QStringLiteral("×"));
    return parts.join(QStringLiteral(" · "));
}

QString modelSummary(const QJsonObject& model)
{
    QStringList parts;
    QString name = model.value(QStringLiteral("name")).toString();
    if (model.value(QStringLiteral("kind")).toString() == QLatin1String("torchscript")) {
        name = QObject::tr("%1 (TorchScript)").arg(QFileInfo(name).fileName());
    }
    parts << name;
    parts << QObject::tr("%1 parameters").arg(number(model.value(QStringLiteral("parameters")).toInteger()));
    const QStringList output = numbers(model.value(QStringLiteral("output_shape")).toArray());
    if (!output.isEmpty()) parts << QObject::tr("output [%1]").arg(output.join(QStringLiteral(", ")));
    if (const QString loss = model.value(QStringLiteral("loss")).toString(); !loss.isEmpty()) {
        parts << QObject::tr("loss %1").arg(loss);
    }
    return parts.join(QStringLiteral(" · "));
}

} // namespace ringmaster::ui
