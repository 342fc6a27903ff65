#include "cli/launch_command.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonObject>
#include <QJsonValue>
#include <QSocketNotifier>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "protocol/run_layout.h"
#include "supervisor/gpu_inventory.h"
#include "supervisor/gpu_placement.h"
#include "supervisor/preflight.h"
#include "supervisor/run_event.h"
#include "supervisor/run_supervisor.h"
#include "cli/slurm_flags.h"
#include "supervisor/system_sampler.h"
#include "supervisor/trainer_flags.h"

namespace ringmaster::supervisor {
namespace {

constexpr int kPlainLineIntervalMs = 2000;
constexpr int kLiveScalarNames = 6;   // a script's live line shows this many scalars (alphabetical)
constexpr int kSummaryScalarNames = 12;
int g_signalPipe[2] = {-1, -1};

extern "C" void forwardSignal(int signal)
{
    const char byte = static_cast<char>(signal);
    [[maybe_unused]] const auto written = ::write(g_signalPipe[1], &byte, 1);
}

QList<int> parseGpuList(const QString& text)
{
    QList<int> gpus;
    for (const auto& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int gpu = part.trimmed().toInt(&ok);
        if (!ok) throw JobError(QStringLiteral("--gpus %1: expected GPU indices like 0,2,3").arg(text));
        gpus.append(gpu);
    }
    if (gpus.isEmpty()) throw JobError(QStringLiteral("--gpus: expected GPU indices like 0,2,3"));
    return gpus;
}

double toNumber(const QString& flag, const QString& value)
{
    bool ok = false;
    const double number = value.toDouble(&ok);
    if (!ok) throw JobError(QStringLiteral("%1 %2: expected a number").arg(flag, value));
    return number;
}

// "--name=value" becomes "--name", "value", so both spellings work for every flag.
QStringList splitEqualsForms(const QStringList& arguments)
{
    QStringList split;
    for (const QString& argument : arguments) {
        const auto equals = argument.indexOf(QLatin1Char('='));
        if (argument.startsWith(QStringLiteral("--")) && equals > 2) {
            split << argument.left(equals) << argument.mid(equals + 1);
        } else {
            split << argument;
        }
    }
    return split;
}

// A script job takes no trainer flags (they belong to ringmaster-trainer) and gets the arguments after "--".
void checkScriptArguments(JobSpec* job, const QStringList& trainerFlags, const QString& jobFileWithTrainerFlags,
                          bool scriptArgsGiven, const QStringList& scriptArgs)
{
    if (!job->isScript()) {
        if (scriptArgsGiven) throw JobError(QStringLiteral("arguments after -- are a script's: give the script with --script PATH"));
        if (job->python != QLatin1String(kDefaultPython)) throw JobError(QStringLiteral("--python is the interpreter of a script: give the script with --script PATH"));
        if (!job->metricPatterns.isEmpty()) {
            throw JobError(QStringLiteral("--metric-pattern reads a script's output (the trainer reports its metrics itself): give the script with --script PATH"));
        }
        if (!job->tensorboardDir.isEmpty()) {
            throw JobError(QStringLiteral("--tensorboard-dir is where a script writes TensorBoard files (the trainer writes RUN_DIR/tb itself): give the script with --script PATH"));
        }
        return;
    }
    if (job->python.isEmpty()) throw JobError(QStringLiteral("--python: give an interpreter, e.g. --python python3"));
    if (!trainerFlags.isEmpty()) {
        throw JobError(QStringLiteral("%1 is a ringmaster-trainer flag and cannot be used with --script: pass your script's own "
                                      "arguments after --, e.g. ringmaster-launch --script %2 -- %1 VALUE")
                           .arg(trainerFlags.first(), job->script));
    }
    if (!jobFileWithTrainerFlags.isEmpty()) {
        throw JobError(QStringLiteral("job file %1 holds trainer flags, which cannot be used with --script: remove its \"trainer\" section")
                           .arg(jobFileWithTrainerFlags));
    }
    job->trainer = QJsonObject(); // the built-in defaults (model, data, …) are the trainer's, not the script's
    if (scriptArgsGiven) job->scriptArgs = scriptArgs;
}

int integerFlag(const QString& flag, const QString& value)
{
    bool ok = false;
    const int number = value.toInt(&ok);
    if (!ok) throw JobError(QStringLiteral("%1 %2: expected an integer").arg(flag, value));
    return number;
}

// --resume RUN_DIR --best: the run's best checkpoint (the trainer's --keep-best keeps checkpoints/best.pt).
QString bestCheckpointOf(const QString& resume)
{
    if (resume.isEmpty()) throw JobError(QStringLiteral("--best needs --resume RUN_DIR: the run whose best checkpoint to resume from"));
    const QString runDir = runDirectoryOf(resume);
    const QString best = QStringLiteral("%1/%2/%3").arg(runDir, QLatin1String(protocol::kCheckpointsFolder),
                                                         QLatin1String(protocol::kBestCheckpointFile));
    if (runDir.isEmpty() || !QFileInfo(best).isFile()) {
        throw JobError(QStringLiteral("--best: %1 has no best checkpoint (checkpoints/%2, kept by the trainer's --keep-best); "
                                      "resume without --best to continue from its newest")
                           .arg(runDir.isEmpty() ? resume : runDir, QLatin1String(protocol::kBestCheckpointFile)));
    }
    return best;
}

} // namespace

QString launchUsage()
{
    const JobSpec defaults; // each default as JobSpec declares it
    const auto number = [](double value) { return QString::number(value); };
    return QStringLiteral(
        "usage: ringmaster-launch [JOB.json] [flags] [trainer flags]\n"
        "       ringmaster-launch --script PATH [--python INTERPRETER] [flags] [-- SCRIPT ARGS...]\n"
        "Starts one ringmaster-trainer per GPU (or CPU rank), streams rank 0's metrics, keeps per-rank logs,\n"
        "and brings the whole group down cleanly. With no GPU and no job it trains the embedded default:\n"
        "2 CPU ranks, Fashion-MNIST cnn, one epoch.\n\n"
        "launcher flags:\n"
        "  --nproc N               CPU ranks (default %7), or GPU count with --device cuda\n"
        "  --gpus 0,2,3            GPUs to use, rank i on the i-th (implies --device cuda)\n"
        "  --device cpu|cuda       (default: cuda when an NVIDIA GPU is present, else cpu)\n"
        "  --out RUN_DIR           run directory (default: OUTPUT_ROOT/yyyyMMdd-HHmmss-MODEL)\n"
        "  --output-root DIR       where new run directories go (default: %8)\n"
        "  --master-port P         rendezvous port (0 = pick a free one; default %9)\n"
        "  --max-restarts N        relaunch from the latest checkpoint after a failure (default %10, at most %11)\n"
        "  --heartbeat-timeout S   a rank silent this long is hung (default %12)\n"
        "  --straggler-after S     name a rank computing 1.2x slower than the others this long (default %13, 0: off)\n"
        "  --grace-period S        SIGTERM to SIGKILL on stop (default %14)\n"
        "  --resume RUN_DIR|CKPT   continue a run in its own run directory, with its own job.json\n"
        "  --best                  with --resume RUN_DIR: from its best checkpoint (checkpoints/best.pt, --keep-best)\n"
        "  --trainer PATH          the ringmaster-trainer binary (default: beside this one)\n"
        "  --quiet                 only the final summary\n"
        "  --notify-command CMD    run CMD (split into words, no shell) when the run completes, fails or stops and\n"
        "                          when a rank hangs or is named a straggler, with the event as one line of JSON on\n"
        "                          its stdin\n"
        "  --script PATH           run your own torchrun-style training script on each rank instead of the trainer\n"
        "  --python INTERPRETER    the script's interpreter, a path or a name on PATH (default %15)\n"
        "  --metric-pattern REGEX  (repeatable) read scalars from rank 0's output with this regular expression:\n"
        "                          named groups are scalars, the group 'step' is the step; 'none' turns it off;\n"
        "                          default: 'name: number' and 'name=number' pairs, 'step N'/'iter N' for the step\n"
        "  --tensorboard-dir DIR   follow the TensorBoard event files the script writes there, at any depth\n"
        "                          (default: the run directory, $RINGMASTER_RUN_DIR)\n"
        "  -- ARGS...              everything after -- is passed to the script unchanged\n"
        "  --test-metric-pattern [--metric-pattern REGEX]... [--json]\n"
        "                          read lines on stdin, print the scalars a script's output would give; no run\n"
        "  --version               the Ringmaster, Qt and LibTorch versions, and whether CUDA and NCCL are compiled in\n"
        "%1"
        "any other --flag VALUE is a trainer flag (see ringmaster-trainer --help), e.g. --max-steps 50;\n"
        "trainer flags are refused with --script. A script's hang detection is off unless --heartbeat-timeout is given.\n"
        "\n"
        "Exit status:\n"
        "  %2  the run completed\n"
        "  %3  the run failed (its root cause is printed, and in RUN_DIR/logs/launcher.log)\n"
        "  %4  bad input: nothing was launched\n"
        "  %5  stopped on request (Ctrl-C, SIGTERM)\n"
        "  %6  left running in Slurm (the terminal closed during a --slurm or --attach run; follow it with --attach)\n")
        .arg(slurmUsage(), QString::number(kLaunchExitCompleted), QString::number(kLaunchExitFailed), QString::number(kLaunchExitUsage),
             QString::number(kLaunchExitStopped), QString::number(kLaunchExitLeftRunning), QString::number(defaults.nproc),
             defaults.outputRoot, QString::number(defaults.masterPort))
        .arg(QString::number(defaults.maxRestarts), QString::number(kMaxRestarts), number(defaults.heartbeatTimeoutSec),
             number(defaults.stragglerAfterSec), number(defaults.gracePeriodSec), defaults.python);
}

NotifyProgram takeNotifyCommand(QStringList* arguments)
{
    const QString flag = QStringLiteral("--notify-command");
    QString text;
    bool given = false;
    for (qsizetype i = 1; i < arguments->size() && arguments->at(i) != QLatin1String("--");) {
        const QString& argument = arguments->at(i);
        if (argument == flag) {
            if (i + 1 >= arguments->size()) throw JobError(QStringLiteral("--notify-command needs a value: the program to run, e.g. --notify-command 'notify-me --to ops'"));
            text = arguments->at(i + 1);
            arguments->remove(i, 2);
            given = true;
        } else if (argument.startsWith(flag + QLatin1Char('='))) {
            text = argument.mid(flag.size() + 1);
            arguments->remove(i);
            given = true;
        } else {
            ++i;
        }
    }
    if (!given) return {};
    QString error;
    NotifyProgram program = parseNotifyCommand(text, &error);
    if (program.isEmpty()) throw JobError(error);
    return program;
}

bool parseLaunchArguments(const QStringList& arguments, JobSpec* job, bool* quiet)
{
    const GpuInventory inventory;
    const QList<GpuInfo> gpuList = inventory.query();
    const int gpus = inventory.available() ? static_cast<int>(gpuList.size()) : nvidiaGpuCount();
    const QString inherited = qEnvironmentVariableIsSet("CUDA_VISIBLE_DEVICES") ? qEnvironmentVariable("CUDA_VISIBLE_DEVICES") : QString();
    const auto usable = static_cast<int>(usableGpus(gpuList, gpus, inherited).size());
    *job = defaultJob(usable);
    job->gpus.clear(); // the first --nproc usable GPUs (gpu_placement.h); --gpus picks them by index
    *quiet = false;
    // Everything after "--" belongs to the script, untouched (not even --name=value splitting).
    QStringList rest = arguments.mid(1);
    QStringList scriptArgs;
    const bool scriptArgsGiven = rest.contains(QStringLiteral("--"));
    if (scriptArgsGiven) {
        const auto separator = rest.indexOf(QStringLiteral("--"));
        scriptArgs = rest.mid(separator + 1);
        rest = rest.mid(0, separator);
    }
    rest = splitEqualsForms(rest);
    // The job file (first argument, or --job FILE anywhere) is the base; every other flag overrides it.
    QString jobFile;
    if (!rest.isEmpty() && !rest.first().startsWith(QStringLiteral("--"))) jobFile = rest.takeFirst();
    if (const auto at = rest.indexOf(QStringLiteral("--job")); at >= 0 && at + 1 < rest.size()) {
        jobFile = rest.at(at + 1);
        rest.remove(at, 2);
    }
    if (!jobFile.isEmpty()) {
        *job = JobSpec::load(jobFile);
    } else if (const auto at = rest.indexOf(QStringLiteral("--resume")); at >= 0 && at + 1 < rest.size()) {
        // Resuming a run without a job file: continue with that run's own settings, not the defaults.
        const QString runDir = runDirectoryOf(rest.at(at + 1));
        if (!runDir.isEmpty() && QFileInfo::exists(JobSpec::fileOfRun(runDir))) {
            *job = JobSpec::loadFromRun(runDir).forResume(rest.at(at + 1));
        }
    }
    const bool fileHasTrainerFlags = !jobFile.isEmpty() && !job->trainer.isEmpty();
    QStringList trainerFlags; // given on this command line
    bool deviceGiven = false;
    bool nprocGiven = false;
    bool gpusGiven = false;
    bool patternsGiven = false;
    bool fromBest = false;
    int givenNproc = 0;
    SlurmFlags slurm;
    for (int i = 0; i < rest.size(); ++i) {
        const QString flag = rest.at(i);
        if (flag == QLatin1String("--help") || flag == QLatin1String("-h")) {
            std::fputs(launchUsage().toUtf8().constData(), stdout);
            return false;
        }
        if (flag == QLatin1String("--quiet")) {
            *quiet = true;
            continue;
        }
        if (flag == QLatin1String("--best")) {
            fromBest = true;
            continue;
        }
        if (SlurmFlags::takesNoValue(flag)) {
            slurm.enable();
            continue;
        }
        if (!flag.startsWith(QStringLiteral("--"))) {
            throw JobError(QStringLiteral("unexpected argument '%1' (the job file comes first; flags look like --name VALUE)").arg(flag));
        }
        if (i + 1 >= rest.size()) throw JobError(QStringLiteral("%1 needs a value").arg(flag));
        const QString value = rest.at(++i);
        if (slurm.take(flag, value)) continue;
        if (flag == QLatin1String("--nproc")) { job->nproc = givenNproc = integerFlag(flag, value); nprocGiven = true; }
        else if (flag == QLatin1String("--gpus")) { job->gpus = parseGpuList(value); job->device = QStringLiteral("cuda"); job->nproc = static_cast<int>(job->gpus.size()); gpusGiven = true; }
        else if (flag == QLatin1String("--device")) { job->device = value; deviceGiven = true; }
        else if (flag == QLatin1String("--out")) job->runDir = value;
        else if (flag == QLatin1String("--output-root")) job->outputRoot = value;
        else if (flag == QLatin1String("--master-port")) job->masterPort = integerFlag(flag, value);
        else if (flag == QLatin1String("--max-restarts")) job->maxRestarts = integerFlag(flag, value);
        else if (flag == QLatin1String("--heartbeat-timeout")) { job->heartbeatTimeoutSec = toNumber(flag, value); job->heartbeatTimeoutGiven = true; }
        else if (flag == QLatin1String("--straggler-after")) job->stragglerAfterSec = toNumber(flag, value);
        else if (flag == QLatin1String("--grace-period")) job->gracePeriodSec = toNumber(flag, value);
        else if (flag == QLatin1String("--resume")) job->resume = value;
        else if (flag == QLatin1String("--trainer")) { job->trainerPath = value; job->trainerPathFromFile = false; }
        else if (flag == QLatin1String("--script")) job->script = value;
        else if (flag == QLatin1String("--python")) { job->python = value; job->pythonFromFile = false; }
        else if (flag == QLatin1String("--metric-pattern")) {
            if (!patternsGiven) job->metricPatterns.clear(); // the command line's patterns replace the file's
            patternsGiven = true;
            job->metricPatterns << value;
        }
        else if (flag == QLatin1String("--tensorboard-dir")) job->tensorboardDir = value;
        else { job->setTrainerOption(flag, typedTrainerValue(flag, value)); trainerFlags << flag; }
    }
    checkScriptArguments(job, trainerFlags, fileHasTrainerFlags ? jobFile : QString(), scriptArgsGiven, scriptArgs);
    if (fromBest) job->resume = bestCheckpointOf(job->resume);
    slurm.applyTo(job);
    // --device cpu on a GPU machine: the GPU default does not apply; CPU ranks default to 2. A given
    // --nproc (even a bad one, which pre-flight reports) is kept.
    if (deviceGiven && job->device == QLatin1String("cpu")) {
        job->gpus.clear();
        if (usable > 0 && !nprocGiven && jobFile.isEmpty()) job->nproc = 2;
    }
    if (gpusGiven && nprocGiven && givenNproc != job->gpus.size()) {
        throw JobError(QStringLiteral("--nproc %1 and --gpus (%2 GPUs) disagree: give --gpus alone (one rank per GPU) or --nproc alone")
                           .arg(givenNproc).arg(job->gpus.size()));
    }
    if (gpusGiven) job->nproc = static_cast<int>(job->gpus.size());
    // --nproc N on GPUs without --gpus: the first N usable GPUs, whatever the job file listed.
    if (job->device == QLatin1String("cuda") && nprocGiven && !gpusGiven) job->gpus.clear();
    return true;
}

LaunchCommand::LaunchCommand(JobSpec job, bool quiet, QObject* parent)
    : QObject(parent)
    , m_job(std::move(job))
    , m_quiet(quiet)
    , m_tty(::isatty(STDOUT_FILENO) != 0)
    , m_supervisor(new RunSupervisor(this))
{
    connect(m_supervisor, &RunSupervisor::stepReceived, this, &LaunchCommand::onStep);
    connect(m_supervisor, &RunSupervisor::evalReceived, this, &LaunchCommand::onEval);
    connect(m_supervisor, &RunSupervisor::scalarsReceived, this, &LaunchCommand::onScalars);
    connect(m_supervisor, &RunSupervisor::finished, this, &LaunchCommand::onFinished);
    connect(m_supervisor, &RunSupervisor::logLine, this, [this](int rank, const QString& line) {
        if (rank < 0 && !m_quiet) printLine(QStringLiteral("[launcher] ") + line);
    });
    connect(m_supervisor, &RunSupervisor::problem, this, &LaunchCommand::printWarning);
    connect(m_supervisor, &RunSupervisor::systemSampled, this, [this](const QList<SystemSample>& samples) {
        for (const SystemSample& sample : samples) {
            if (sample.name == QLatin1String(system_metric::kGpuUtilPercent)) m_gpuUtil.insert(sample.rank, sample.value);
        }
    });
    connect(m_supervisor, &RunSupervisor::checkpointSaved, this, [this](qint64 step, const QString& path) {
        if (!m_quiet) printLine(QStringLiteral("checkpoint step %1: %2").arg(step).arg(path));
    });
    if (::pipe2(g_signalPipe, O_CLOEXEC | O_NONBLOCK) == 0) {
        m_signalNotifier = new QSocketNotifier(g_signalPipe[0], QSocketNotifier::Read, this);
        connect(m_signalNotifier, &QSocketNotifier::activated, this, &LaunchCommand::onSignal);
        struct sigaction action{};
        action.sa_handler = forwardSignal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        sigaction(SIGINT, &action, nullptr);
        sigaction(SIGTERM, &action, nullptr);
        sigaction(SIGHUP, &action, nullptr);
    }
}

void LaunchCommand::setNotifyCommand(const NotifyProgram& program)
{
    if (program.isEmpty()) return;
    m_notify = new NotifyCommand(program, kNotifyTimeoutMs, this);
    auto* watch = new RunEventWatch(m_supervisor, this);
    connect(watch, &RunEventWatch::happened, m_notify, &NotifyCommand::send);
    connect(m_notify, &NotifyCommand::problem, this, &LaunchCommand::printWarning);
    connect(m_notify, &NotifyCommand::drained, this, [this] {
        if (m_ending) QCoreApplication::exit(m_exitCode);
    });
}

void LaunchCommand::exitWhenNotified()
{
    m_ending = true;
    // Queued: the run's final event reaches the notify command from the same signal, after this slot.
    QMetaObject::invokeMethod(this, [this] {
        if (!m_notify || m_notify->idle()) QCoreApplication::exit(m_exitCode);
    }, Qt::QueuedConnection);
}

LaunchCommand::~LaunchCommand()
{
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    std::signal(SIGHUP, SIG_DFL);
}

int LaunchCommand::exec()
{
    QString error;
    const bool launched = m_attachDir.isEmpty() ? m_supervisor->start(m_job, &error) : m_supervisor->attach(m_attachDir, &error);
    if (launched && !m_attachDir.isEmpty()) m_job = m_supervisor->job();
    if (!launched) {
        // Ctrl-C during pre-flight: the user stopped it, the job was not at fault.
        char byte = 0;
        if (::read(g_signalPipe[0], &byte, 1) == 1) {
            std::fputs("ringmaster-launch: stopped during pre-flight; nothing was launched\n", stderr);
            return kLaunchExitStopped;
        }
        std::fprintf(stderr, "ringmaster-launch: error: %s\n", error.toUtf8().constData());
        return kLaunchExitUsage;
    }
    if (!m_quiet) {
        printLine(QStringLiteral("run %1: %2 rank(s) on %3; logs in %1/logs")
                      .arg(m_supervisor->runDir()).arg(m_job.worldSize()).arg(m_job.device));
    }
    m_lastPlainLine.start();
    QCoreApplication::exec();
    return m_exitCode;
}

void LaunchCommand::onSignal()
{
    char byte = 0;
    while (::read(g_signalPipe[0], &byte, 1) == 1) {
        // The terminal closed during a Slurm run: the job is Slurm's and runs on (a local run's ranks
        // would die with this process, so they are stopped as on Ctrl-C).
        if (byte == SIGHUP) {
            if (const QString left = m_supervisor->leaveRunning(); !left.isEmpty()) {
                printLine(left);
                m_exitCode = kLaunchExitLeftRunning;
                QCoreApplication::exit(m_exitCode);
                return;
            }
        }
        if (m_ending) { // the run is over: only the notify command is left, and the user does not want to wait
            if (m_notify) m_notify->abandon();
            QCoreApplication::exit(m_exitCode);
            return;
        }
        ++m_signalsSeen;
        if (m_signalsSeen == 1) {
            printLine(m_job.isScript() ? QStringLiteral("stopping gracefully (SIGTERM to every rank); press Ctrl-C again to kill")
                                       : QStringLiteral("stopping gracefully (final checkpoint); press Ctrl-C again to kill"));
            m_supervisor->requestStop();
        } else {
            printLine(QStringLiteral("killing every rank"));
            m_supervisor->kill();
        }
    }
}

void LaunchCommand::printWarning(const QString& line)
{
    if (m_progressShown) { // the live line goes, so that the warning is not drawn over it
        std::fputs("\r\033[K", stdout);
        m_progressShown = false;
        std::fflush(stdout);
    }
    std::fprintf(stderr, "ringmaster-launch: warning: %s\n", line.toUtf8().constData());
}

void LaunchCommand::printLine(const QString& line)
{
    if (m_progressShown) {
        std::fputs("\r\033[K", stdout);
        m_progressShown = false;
    }
    std::fprintf(stdout, "%s\n", line.toUtf8().constData());
    std::fflush(stdout);
}

void LaunchCommand::printProgress(const StepMetric& m)
{
    const qint64 total = m_supervisor->totalSteps();
    const double remaining = total > 0 && m.samplesPerSec > 0
                                 ? static_cast<double>(total - m.step) * (m.wallTime / std::max<qint64>(m.step, 1))
                                 : std::nan("");
    QString line = QStringLiteral("epoch %1  step %2/%3  loss %4  %5 samples/s  ETA %6")
                       .arg(m.epoch).arg(m.step).arg(total).arg(m.loss, 0, 'f', 4)
                       .arg(m.samplesPerSec, 0, 'f', 0).arg(formatDuration(remaining));
    // Two ranks or more: the one computing longest per step, as a multiple of the others' median.
    if (const StragglerVerdict slowest = m_supervisor->slowestRank(); slowest.rank >= 0 && slowest.othersMedianMs > 0) {
        line += QStringLiteral("  slowest rank %1 (%2x)").arg(slowest.rank).arg(slowest.ratio(), 0, 'f', 2);
    }
    showLive(line + gpuUtilText());
}

void LaunchCommand::showLive(const QString& text)
{
    if (m_tty) {
        // Never wider than the window (read each time: the user may resize it), or the line wraps
        // and every redraw leaves a stale half line behind.
        winsize window{};
        const bool known = ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &window) == 0 && window.ws_col > 0;
        const QString fitted = known && text.size() >= window.ws_col ? text.left(window.ws_col - 1) : text;
        std::fprintf(stdout, "\r\033[K%s", fitted.toUtf8().constData());
        m_progressShown = true;
        std::fflush(stdout);
    } else {
        printLine(text);
    }
}

QString LaunchCommand::gpuUtilText() const
{
    if (m_gpuUtil.isEmpty()) return {};
    const auto [least, most] = std::minmax_element(m_gpuUtil.cbegin(), m_gpuUtil.cend());
    if (qRound(*least) == qRound(*most)) return QStringLiteral("  GPU util %1%").arg(qRound(*most));
    return QStringLiteral("  GPU util %1-%2%").arg(qRound(*least)).arg(qRound(*most));
}

QString LaunchCommand::lastScalarsText(int maxNames) const
{
    QStringList parts;
    for (auto it = m_lastScalars.cbegin(); it != m_lastScalars.cend() && parts.size() < maxNames; ++it) {
        parts << QStringLiteral("%1 %2").arg(it.key(), QString::number(it.value(), 'g', 5));
    }
    if (m_lastScalars.size() > maxNames) parts << QStringLiteral("(+%1 more)").arg(m_lastScalars.size() - maxNames);
    return parts.join(QStringLiteral("  "));
}

void LaunchCommand::onScalars(const ScalarBatch& scalars)
{
    if (!m_job.isScript()) return; // the trainer's live line comes from its step frames
    m_lastScalarStep = scalars.step;
    for (const Scalar& scalar : scalars.values) m_lastScalars.insert(scalar.name, scalar.value);
    if (m_quiet) return;
    const bool first = !m_firstStepShown;
    m_firstStepShown = true;
    if (m_tty || first || m_lastPlainLine.elapsed() >= kPlainLineIntervalMs) {
        m_lastPlainLine.restart();
        showLive(QStringLiteral("step %1  %2").arg(m_lastScalarStep).arg(lastScalarsText(kLiveScalarNames)) + gpuUtilText());
    }
}

void LaunchCommand::onStep(const StepMetric& metric)
{
    m_lastStep = metric;
    if (m_quiet) return;
    // A terminal gets a live line; a pipe gets a plain line every couple of seconds.
    const bool first = !m_firstStepShown;
    m_firstStepShown = true;
    if (m_tty || first || m_lastPlainLine.elapsed() >= kPlainLineIntervalMs || metric.step == m_supervisor->totalSteps()) {
        m_lastPlainLine.restart();
        printProgress(metric);
    }
}

void LaunchCommand::onEval(const EvalMetric& metric)
{
    m_lastEval = metric;
    m_haveEval = true;
    if (!m_quiet) {
        printLine(QStringLiteral("eval epoch %1 step %2: val_loss %3  val_accuracy %4")
                      .arg(metric.epoch).arg(metric.step).arg(metric.valLoss, 0, 'f', 4).arg(metric.valAccuracy, 0, 'f', 4));
    }
}

void LaunchCommand::onFinished(RunState state)
{
    const QString dir = m_supervisor->runDir();
    if (state == RunState::Failed) {
        const auto cause = m_supervisor->rootCause();
        printLine(QStringLiteral("FAILED: %1").arg(cause.summary()));
        for (const auto& line : cause.lastLines) printLine(QStringLiteral("  | ") + line);
        if (QFileInfo::exists(dir + QLatin1Char('/') + QLatin1String(protocol::kLogsFolder))) { // not when the run directory was deleted
            printLine(QStringLiteral("logs: %1/logs/rank-%2.log").arg(dir).arg(std::max(cause.rank, 0)));
        }
        m_exitCode = kLaunchExitFailed;
    } else {
        // A script reports no steps over the socket: its own output is in its rank logs.
        QString line = m_supervisor->stepsReceived() > 0
                           ? QStringLiteral("%1: %2 steps, loss %3").arg(runStateName(state)).arg(m_lastStep.step).arg(m_lastStep.loss, 0, 'f', 4)
                           : runStateName(state);
        if (m_supervisor->stepsReceived() == 0 && !m_lastScalars.isEmpty()) {
            line += QStringLiteral(": step %1, %2").arg(m_lastScalarStep).arg(lastScalarsText(kSummaryScalarNames).replace(QStringLiteral("  "), QStringLiteral(", ")));
        }
        if (m_haveEval) {
            line += QStringLiteral(", val_loss %1, val_accuracy %2").arg(m_lastEval.valLoss, 0, 'f', 4).arg(m_lastEval.valAccuracy, 0, 'f', 4);
        }
        line += QStringLiteral(", %1 restart(s); run directory %2").arg(m_supervisor->restartCount()).arg(dir);
        printLine(line);
        m_exitCode = state == RunState::Completed ? kLaunchExitCompleted : kLaunchExitStopped;
    }
    exitWhenNotified();
}

} // namespace ringmaster::supervisor
