#pragma once
// ringmaster-launch's Slurm flags: --slurm turns a job into a Slurm batch job (the same as "launch.slurm"
// in a job file), --nodes, --ntasks-per-node, --gpus-per-node, --partition, --time, --account and the
// repeatable --slurm-arg describe it; --attach RUN_DIR follows again a run that Slurm still runs. The
// request is checked by the job file's own rules (core/supervisor/slurm/slurm_request.h), and a
// message names the flag the user typed, not the job file key.

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include "supervisor/job_spec.h"

namespace ringmaster::supervisor {

// The Slurm flags' usage lines, for launchUsage().
QString slurmUsage();

class SlurmFlags
{
public:
    // True when `flag` (with --slurm: no value) is a Slurm flag; consumes `value` when it takes one.
    static bool takesNoValue(const QString& flag) { return flag == QLatin1String("--slurm"); }
    // Records one flag; false when it is not a Slurm flag. Throws JobError for a malformed value.
    bool take(const QString& flag, const QString& value);
    void enable() { m_enabled = true; }
    // Applies what was given to the job (over the job file's "launch.slurm"); throws JobError naming
    // the flag for a request the job file rules refuse, or for Slurm flags without --slurm.
    void applyTo(JobSpec* job) const;

private:
    bool m_enabled = false;
    QStringList m_given;          // the flags given, in order, for messages
    QJsonObject m_values;         // "launch.slurm" keys given by flags
    QStringList m_extraArgs;
};

// `ringmaster-launch --attach RUN_DIR [--quiet]`: true (with *runDir) when the arguments ask to attach;
// throws JobError for anything else given with --attach.
bool parseAttachArguments(const QStringList& arguments, QString* runDir, bool* quiet);

} // namespace ringmaster::supervisor
