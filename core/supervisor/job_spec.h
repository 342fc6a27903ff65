#pragma once
// The job file: everything the GUI form holds. Versioned JSON:
//   {
//     "version": 1,
//     "launch": {"device": "cpu", "nproc": 2, "gpus": [], "output_root": "runs", "run_dir": "",
//                "master_port": 0, "max_restarts": 0, "heartbeat_timeout": 120, "grace_period": 30,
//                "straggler_after": 60, "resume": "", "trainer_path": ""},
//     "trainer": {"model": "cnn", "data": "fashion-mnist", "epochs": 1, "batch_size": 64, ...}
//   }
// "trainer" holds ringmaster-trainer's flags by name (see ringmaster-trainer --help); the trainer
// reads the same file (--job), so both sides share one format. A job that runs the user's own
// torchrun-style script instead has "launch.script" (and optionally "script_args", a list of strings,
// and "python", the interpreter, default python3; "metric_patterns", a list of regular expressions for
// its output, ["none"] to turn that off; "tensorboard_dir", the folder its TensorBoard files go to, default
// the run directory) and no trainer flags. "launch.slurm" (slurm/slurm_request.h) submits the job to Slurm. Loading checks every key and type
// (integers where a count is meant, GPU indices as non-negative integers) and names the key it
// rejects; load -> save gives back the same job, trainer flags it does not know included.

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include "supervisor/slurm/slurm_request.h"

namespace ringmaster::supervisor {

inline constexpr int kJobFormatVersion = 1;
inline constexpr int kMaxJobRanks = 1024;
// Restarts of one launch: each backs off up to a minute (local_run.h), so 1000 is most of a day of retrying.
inline constexpr int kMaxRestarts = 1000;
inline constexpr char kDefaultPython[] = "python3";
inline constexpr double kDefaultHeartbeatTimeoutSec = 120.0;
inline constexpr double kDefaultStragglerAfterSec = 60.0;
inline constexpr double kMaxStragglerAfterSec = 86400.0;

struct JobSpec
{
    QString device = QStringLiteral("cpu");   // cpu | cuda
    int nproc = 2;                            // CPU ranks; on cuda, the GPU count when gpus is empty
    QList<int> gpus;                          // cuda: the selected GPU indices, rank i on gpus[i]
    QString outputRoot = QStringLiteral("runs");
    QString runDir;                           // explicit run directory (else a new one under outputRoot)
    int masterPort = 0;                       // 0: pick a free port
    int maxRestarts = 0;
    double heartbeatTimeoutSec = kDefaultHeartbeatTimeoutSec;
    double gracePeriodSec = 30.0;
    // "launch.straggler_after": a rank computing 1.2x slower than the others this long is named a straggler
    // (straggler_detector.h); 0 turns naming off. Saved only when it differs from the default.
    double stragglerAfterSec = kDefaultStragglerAfterSec;
    QString resume;                           // run directory or checkpoint to continue from
    QString trainerPath;                      // empty: ringmaster-trainer beside the launcher
    // Set when trainerPath came from a job file ("launch.trainer_path"), cleared by --trainer: a file
    // someone else wrote may name only the trainer the user runs anyway or chose (program_checks.h).
    bool trainerPathFromFile = false;
    QJsonObject trainer;                      // trainer flags by name
    QString script;                           // the user's own training script (empty: the built-in trainer)
    QStringList scriptArgs;                   // the script's own arguments
    QString python = QString::fromLatin1(kDefaultPython); // the script's interpreter, a path or a name on PATH
    // Set when python came from a job file ("launch.python"), cleared by --python or the user's own entry:
    // checked against the interpreters the user has chosen (program_checks.h).
    bool pythonFromFile = false;
    QStringList metricPatterns;               // rank 0's output parsed with these (empty: default rules; {"none"}: off)
    QString tensorboardDir;                   // TensorBoard event files followed here (empty: the run directory)
    // A script sends no heartbeats, so its hang detection is off unless a timeout was given (in the
    // file or as --heartbeat-timeout); the built-in trainer always has one.
    bool heartbeatTimeoutGiven = false;
    // "launch.slurm": when enabled the job runs as one Slurm batch job (slurm/slurm_request.h) instead of
    // as ranks this machine starts itself.
    SlurmRequest slurm;

    // Ranks: nproc (or the GPUs picked); under Slurm, nodes x tasks per node (slurm/batch_script.h).
    int worldSize() const;
    bool isScript() const { return !script.isEmpty(); }
    // The name a new run directory ends with: the script's stem, or the model's.
    QString runName() const;
    QJsonObject toJson() const;
    // Throws JobError (with a message naming the key) for a malformed file or value.
    static JobSpec fromJson(const QJsonObject& object, const QString& origin);
    static JobSpec load(const QString& path);
    // RUN_DIR/job.json: the job a run was launched with.
    static QString fileOfRun(const QString& runDir);
    static JobSpec loadFromRun(const QString& runDir) { return load(fileOfRun(runDir)); }
    void save(const QString& path) const;
    // Sets a trainer flag ("batch-size" or "batch_size"), stored with '_'.
    void setTrainerOption(const QString& flag, const QJsonValue& value);
    QString trainerOption(const QString& flag, const QString& fallback = {}) const;
    // An earlier run's job (its job.json) launched again, without what that launch resolved for itself (its run
    // directory, rendezvous port, trainer path, Slurm job id): forNewLaunch() starts a new run in a new folder,
    // forResume(TARGET) continues the run from TARGET (its run directory, or one of its checkpoints).
    JobSpec forNewLaunch() const;
    JobSpec forResume(const QString& target) const;
};

// The run directory a --resume target belongs to: the folder itself, or for a checkpoint file
// (RUN_DIR/checkpoints/step-N.pt) its run directory. Empty when the target does not exist.
QString runDirectoryOf(const QString& resumeTarget);

// A trainer flag's value as command-line text: integers in full (a seed of 1234567 stays 1234567),
// other numbers in the shortest form that reads back to the same double, booleans as true/false.
QString flagValueText(const QJsonValue& value);

// The embedded default: 2 CPU ranks (or every GPU), Fashion-MNIST cnn, one epoch.
JobSpec defaultJob(int gpuCount);

class JobError : public std::runtime_error
{
public:
    explicit JobError(const QString& message) : std::runtime_error(message.toStdString()) {}
    QString message() const { return QString::fromStdString(what()); }
};

} // namespace ringmaster::supervisor
