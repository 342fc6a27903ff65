// ringmaster-soak: the long-lived supervisor of scripts/soak.sh (on demand, never in CI). For the given
// minutes it repeats a round of cycles against real trainers, from this one process: a run that
// completes, a graceful stop, a rank killed with SIGKILL, the resume of that run, and ringmaster-launch
// itself (the installed or the built one) stopped with SIGTERM, killed with SIGKILL and resumed. After
// each cycle it prints one line: what happened, how many ringmaster-launch and ringmaster-trainer
// processes of the soak are still alive (0 expected), and this process's resident memory, open file
// descriptors and threads, so a leak in the supervisor shows as a trend. It ends with a summary and
// exits 1 when any cycle left a process behind or ended in the wrong state.
//   ringmaster-soak --minutes M --launch PATH --trainer PATH [--seed N]
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "supervisor/job_spec.h"
#include "supervisor/run_supervisor.h"
#include "test_support.h"

using namespace ringmaster::supervisor;
using namespace ringmaster::supervisor::test;

namespace {

constexpr int kRunTimeoutMs = 180000;
constexpr int kReapTimeoutMs = 10000;

struct Usage
{
    qint64 rssKiB = 0;
    int fds = 0;
    int threads = 0;
};

int entries(const char* folder)
{
    return static_cast<int>(QDir(QLatin1String(folder)).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System).size());
}

Usage usage()
{
    Usage u;
    for (const QString& line : readAll(QStringLiteral("/proc/self/status")).split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("VmRSS:"))) u.rssKiB = line.section(QLatin1Char(' '), 1, 1, QString::SectionSkipEmpty).toLongLong();
    }
    u.fds = entries("/proc/self/fd");
    u.threads = entries("/proc/self/task");
    return u;
}

// The mlp on Fashion-MNIST with 1% held out, checkpoints every 10 steps; maxSteps 0: 20 epochs.
JobSpec soakJob(const QString& root, qint64 maxSteps)
{
    JobSpec job = cpuJob(root, maxSteps, maxSteps > 0 ? 1 : 20);
    job.setTrainerOption(QStringLiteral("model"), QStringLiteral("mlp"));
    job.setTrainerOption(QStringLiteral("batch-size"), 32);
    job.setTrainerOption(QStringLiteral("val-split"), 0.01);
    job.setTrainerOption(QStringLiteral("checkpoint-every"), 10);
    job.setTrainerOption(QStringLiteral("log-every"), 100);
    return job;
}

QStringList launchArguments(const QString& root)
{
    return {QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--output-root"), root, QStringLiteral("--threads"),
            QStringLiteral("1"), QStringLiteral("--model"), QStringLiteral("mlp"), QStringLiteral("--batch-size"), QStringLiteral("32"),
            QStringLiteral("--val-split"), QStringLiteral("0.01"), QStringLiteral("--checkpoint-every"), QStringLiteral("10"),
            QStringLiteral("--epochs"), QStringLiteral("20"), QStringLiteral("--log-every"), QStringLiteral("100")};
}

bool waitForFinal(RunSupervisor& supervisor)
{
    return QTest::qWaitFor([&] { return isFinal(supervisor.state()); }, kRunTimeoutMs);
}

// "" when it went as expected, else what went wrong.
using Cycle = QString (*)(const QString& root, QRandomGenerator& random, QString* lastRun, QString* detail);

QString expectState(RunSupervisor& supervisor, RunState expected)
{
    if (!waitForFinal(supervisor)) return QStringLiteral("did not end in %1 s").arg(kRunTimeoutMs / 1000);
    if (supervisor.state() != expected) {
        return QStringLiteral("%1 (expected %2): %3").arg(runStateName(supervisor.state()), runStateName(expected), supervisor.rootCause().summary());
    }
    const QString status = readJson(supervisor.runDir() + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString();
    if (status != runStateName(expected)) return QStringLiteral("summary.json says '%1' (expected %2)").arg(status, runStateName(expected));
    if (const QStringList partial = tempFilesUnder(supervisor.runDir()); !partial.isEmpty()) {
        return QStringLiteral("partial files left: %1").arg(partial.join(QLatin1Char(' ')));
    }
    return {};
}

QString complete(const QString& root, QRandomGenerator&, QString*, QString* detail)
{
    RunSupervisor supervisor;
    QString error;
    if (!supervisor.start(soakJob(root, 40), &error)) return error;
    const QString problem = expectState(supervisor, RunState::Completed);
    *detail = QStringLiteral("completed, %1 steps").arg(supervisor.stepsReceived());
    return problem;
}

QString stop(const QString& root, QRandomGenerator& random, QString*, QString* detail)
{
    RunSupervisor supervisor;
    QString error;
    if (!supervisor.start(soakJob(root, 0), &error)) return error;
    const qint64 at = 5 + random.bounded(40);
    if (!QTest::qWaitFor([&] { return supervisor.stepsReceived() >= at || isFinal(supervisor.state()); }, kRunTimeoutMs)) return QStringLiteral("no steps");
    supervisor.requestStop();
    const QString problem = expectState(supervisor, RunState::Stopped);
    *detail = QStringLiteral("stopped after step %1").arg(supervisor.stepsReceived());
    return problem;
}

QString killRank(const QString& root, QRandomGenerator& random, QString* lastRun, QString* detail)
{
    RunSupervisor supervisor;
    QString error;
    if (!supervisor.start(soakJob(root, 0), &error)) return error;
    const qint64 at = 12 + random.bounded(40);
    static int kills = 0;
    const int rank = kills++ % 2; // each rank in turn
    if (!QTest::qWaitFor([&] { return supervisor.stepsReceived() >= at || isFinal(supervisor.state()); }, kRunTimeoutMs)) return QStringLiteral("no steps");
    ::kill(static_cast<pid_t>(supervisor.ranks().at(rank).pid), SIGKILL);
    QString problem = expectState(supervisor, RunState::Failed);
    if (problem.isEmpty() && supervisor.rootCause().rank != rank) problem = QStringLiteral("root cause names rank %1, not %2").arg(supervisor.rootCause().rank).arg(rank);
    *lastRun = supervisor.runDir();
    *detail = QStringLiteral("failed at step ~%1: %2").arg(supervisor.stepsReceived()).arg(supervisor.rootCause().summary().section(QLatin1Char(','), 0, 0));
    return problem;
}

QString resume(const QString&, QRandomGenerator&, QString* lastRun, QString* detail)
{
    if (lastRun->isEmpty()) return QStringLiteral("no run to resume");
    JobSpec job;
    try {
        job = JobSpec::load(*lastRun + QStringLiteral("/job.json"));
    } catch (const JobError& e) {
        return e.message();
    }
    const qint64 done = csvRows(*lastRun + QStringLiteral("/metrics.csv"));
    job.resume = *lastRun;
    job.setTrainerOption(QStringLiteral("max-steps"), static_cast<double>(done + 20));
    RunSupervisor supervisor;
    QString error;
    if (!supervisor.start(job, &error)) return error;
    QString problem = expectState(supervisor, RunState::Completed);
    const QList<qint64> steps = csvSteps(*lastRun + QStringLiteral("/metrics.csv"));
    for (qsizetype i = 0; problem.isEmpty() && i < steps.size(); ++i) {
        if (steps.at(i) != i + 1) problem = QStringLiteral("metrics.csv line %1 holds step %2").arg(i + 2).arg(steps.at(i));
    }
    *detail = QStringLiteral("resumed to step %1").arg(steps.isEmpty() ? 0 : steps.last());
    lastRun->clear();
    return problem;
}

QString launcherStop(const QString& root, QRandomGenerator&, QString*, QString* detail)
{
    LaunchProcess launch;
    launch.start(launchArguments(root));
    if (!QTest::qWaitFor([&] { launch.read(); return !launch.runDir().isEmpty() && csvRows(launch.runDir() + QStringLiteral("/metrics.csv")) >= 5; }, kRunTimeoutMs)) {
        return QStringLiteral("ringmaster-launch never ran: ") + launch.output.right(300);
    }
    ::kill(static_cast<pid_t>(launch.process.processId()), SIGTERM);
    if (!launch.finish(60000)) return QStringLiteral("ringmaster-launch did not exit 60 s after SIGTERM");
    *detail = QStringLiteral("ringmaster-launch exit %1").arg(launch.process.exitCode());
    if (launch.process.exitCode() != 3) return QStringLiteral("exit %1 (expected 3): %2").arg(launch.process.exitCode()).arg(launch.output.right(300));
    const QString status = readJson(launch.runDir() + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString();
    return status == QLatin1String("stopped") ? QString() : QStringLiteral("summary.json says '%1'").arg(status);
}

QString launcherKill(const QString& root, QRandomGenerator&, QString* lastRun, QString* detail)
{
    LaunchProcess launch;
    launch.start(launchArguments(root));
    if (!QTest::qWaitFor([&] { launch.read(); return !launch.runDir().isEmpty() && trainerPids(launch.runDir()).size() == 2 &&
                                                     csvRows(launch.runDir() + QStringLiteral("/metrics.csv")) >= 12; }, kRunTimeoutMs)) {
        return QStringLiteral("ringmaster-launch never ran: ") + launch.output.right(300);
    }
    const QList<qint64> pids = trainerPids(launch.runDir());
    ::kill(static_cast<pid_t>(launch.process.processId()), SIGKILL);
    launch.finish(10000);
    if (!QTest::qWaitFor([&] { return processGone(pids.at(0)) && processGone(pids.at(1)); }, kReapTimeoutMs)) {
        return QStringLiteral("trainers outlived the killed launcher");
    }
    *lastRun = launch.runDir();
    *detail = QStringLiteral("launcher killed, both ranks gone");
    return {};
}

QString launcherResume(const QString&, QRandomGenerator&, QString* lastRun, QString* detail)
{
    if (lastRun->isEmpty()) return QStringLiteral("no run to resume");
    LaunchProcess launch;
    const qint64 done = csvRows(*lastRun + QStringLiteral("/metrics.csv"));
    launch.start({QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--resume"), *lastRun, QStringLiteral("--max-steps"),
                  QString::number(done + 20), QStringLiteral("--quiet")});
    if (!launch.finish(kRunTimeoutMs)) return QStringLiteral("ringmaster-launch --resume did not end");
    *detail = QStringLiteral("ringmaster-launch --resume exit %1").arg(launch.process.exitCode());
    const QString run = *lastRun;
    lastRun->clear();
    if (launch.process.exitCode() != 0) return QStringLiteral("exit %1: %2").arg(launch.process.exitCode()).arg(launch.output.right(300));
    const QString status = readJson(run + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString();
    if (status != QLatin1String("completed")) return QStringLiteral("summary.json says '%1'").arg(status);
    if (const QStringList partial = tempFilesUnder(run); !partial.isEmpty()) return QStringLiteral("partial files left: %1").arg(partial.join(QLatin1Char(' ')));
    return {};
}

struct Step
{
    const char* name;
    Cycle run;
};

const Step kRound[] = {
    {"complete", complete},        {"stop", stop},
    {"kill-9-rank", killRank},     {"resume", resume},
    {"launch-sigterm", launcherStop}, {"launch-kill-9", launcherKill},
    {"launch-resume", launcherResume},
};

int count(const QList<qint64>& pids, const char* comm)
{
    int n = 0;
    for (const qint64 pid : pids) {
        if (readAll(QStringLiteral("/proc/%1/comm").arg(pid)).trimmed().startsWith(QLatin1String(comm))) ++n;
    }
    return n;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    double minutes = 10;
    quint64 seed = static_cast<quint64>(QDateTime::currentMSecsSinceEpoch());
    for (qsizetype i = 1; i + 1 < args.size(); i += 2) {
        const QString& flag = args.at(i);
        const QString& value = args.at(i + 1);
        if (flag == QLatin1String("--minutes")) minutes = value.toDouble();
        else if (flag == QLatin1String("--launch")) qputenv("RINGMASTER_LAUNCH", QFileInfo(value).absoluteFilePath().toUtf8());
        else if (flag == QLatin1String("--trainer")) qputenv("RINGMASTER_TRAINER", QFileInfo(value).absoluteFilePath().toUtf8());
        else if (flag == QLatin1String("--seed")) seed = value.toULongLong();
        else {
            std::fprintf(stderr, "usage: ringmaster-soak --minutes M --launch PATH --trainer PATH [--seed N]\n");
            return 2;
        }
    }
    if (args.size() % 2 == 0 || minutes <= 0 || !QFileInfo(launchPath()).isExecutable() || !QFileInfo(trainerPath()).isExecutable()) {
        std::fprintf(stderr, "ringmaster-soak: give --minutes M (> 0) and executable --launch and --trainer paths\n");
        return 2;
    }
    QTemporaryDir root(QDir::tempPath() + QStringLiteral("/ringmaster-soak-XXXXXX"));
    QRandomGenerator random(seed);
    std::printf("soak for %.1f min: launcher %s, trainer %s, runs under %s, seed %llu\n", minutes, qPrintable(launchPath()),
                qPrintable(trainerPath()), qPrintable(root.path()), seed);
    std::fflush(stdout);

    QElapsedTimer clock;
    clock.start();
    const auto deadline = static_cast<qint64>(minutes * 60000);
    int cycles = 0;
    int bad = 0;
    int stray = 0;
    QString lastRun;
    Usage first;
    Usage peak;
    Usage last;
    while (clock.elapsed() < deadline) {
        for (const Step& step : kRound) {
            if (clock.elapsed() >= deadline && std::strncmp(step.name, "resume", 6) != 0 && std::strcmp(step.name, "launch-resume") != 0) break;
            ++cycles;
            QElapsedTimer took;
            took.start();
            QString detail;
            const QString problem = step.run(root.path(), random, &lastRun, &detail);
            // The ranks of a finished cycle are reaped at once; a killed launcher's within PDEATHSIG's reach.
            QList<qint64> left;
            (void)QTest::qWaitFor([&] { left = ringmasterProcesses(root.path()); return left.isEmpty(); }, kReapTimeoutMs);
            const int launchers = count(left, "ringmaster-laun");
            const int trainers = count(left, "ringmaster-trai");
            if (!left.isEmpty()) {
                ++stray;
                for (const qint64 pid : left) ::kill(static_cast<pid_t>(pid), SIGKILL); // the next cycles start clean
            }
            if (!problem.isEmpty()) ++bad;
            last = usage();
            if (cycles == 1 || cycles == static_cast<int>(std::size(kRound))) first = last; // after the first round, once there is one
            peak.rssKiB = std::max(peak.rssKiB, last.rssKiB);
            peak.fds = std::max(peak.fds, last.fds);
            peak.threads = std::max(peak.threads, last.threads);
            std::printf("cycle %4d %-15s %-5s %5.1f s  launchers %d trainers %d  rss %6.1f MiB  fds %3d  threads %2d  %s\n", cycles,
                        step.name, problem.isEmpty() && left.isEmpty() ? "ok" : "BAD", static_cast<double>(took.elapsed()) / 1000.0,
                        launchers, trainers, static_cast<double>(last.rssKiB) / 1024.0, last.fds, last.threads,
                        qPrintable(problem.isEmpty() ? detail : problem));
            std::fflush(stdout);
        }
    }
    std::printf("summary: %d cycles in %.1f min, %d with a stray process, %d with a bad status; supervisor after the first "
                "round (or cycle) rss %.1f MiB fds %d threads %d, at the end rss %.1f MiB fds %d threads %d (peak rss %.1f MiB fds %d "
                "threads %d)\n",
                cycles, static_cast<double>(clock.elapsed()) / 60000.0, stray, bad, static_cast<double>(first.rssKiB) / 1024.0,
                first.fds, first.threads, static_cast<double>(last.rssKiB) / 1024.0, last.fds, last.threads,
                static_cast<double>(peak.rssKiB) / 1024.0, peak.fds, peak.threads);
    std::printf("%s\n", stray == 0 && bad == 0 ? "soak passed" : "soak FAILED");
    return stray == 0 && bad == 0 ? 0 : 1;
}
