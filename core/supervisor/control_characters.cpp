#include "supervisor/control_characters.h"

#include "supervisor/job_spec.h"
#include "supervisor/trainer_flags.h"

namespace ringmaster::supervisor {
namespace {

QString problem(const QString& key, const QString& flag, const QString& value)
{
    const QString found = controlCharacterIn(value);
    if (found.isEmpty()) return {};
    return QStringLiteral("\"%1\"%2 holds %3: paths and names cannot hold control characters; remove it")
        .arg(key, flag.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(flag), found);
}

} // namespace

QString controlCharacterIn(const QString& text)
{
    for (const QChar c : text) {
        const char16_t code = c.unicode();
        if (code >= 0x20 && code != 0x7f && !(code >= 0x80 && code < 0xa0)) continue;
        switch (code) {
        case u'\n': return QStringLiteral("a newline (\\n)");
        case u'\r': return QStringLiteral("a carriage return (\\r)");
        case u'\t': return QStringLiteral("a tab (\\t)");
        case 0: return QStringLiteral("NUL (\\0)");
        default:
            return QStringLiteral("the control character U+%1")
                .arg(QString::number(int(code), 16).toUpper().rightJustified(4, QLatin1Char('0')));
        }
    }
    return {};
}

QString controlCharacterProblem(const JobSpec& job)
{
    const struct
    {
        const char* key;
        const char* flag;
        const QString& value;
    } launch[] = {
        {"launch.output_root", "--output-root", job.outputRoot}, {"launch.run_dir", "--out", job.runDir},
        {"launch.resume", "--resume", job.resume},               {"launch.trainer_path", "--trainer", job.trainerPath},
        {"launch.script", "--script", job.script},               {"launch.python", "--python", job.python},
        {"launch.tensorboard_dir", "--tensorboard-dir", job.tensorboardDir}, {"launch.device", "--device", job.device},
        {"launch.slurm.partition", "--partition", job.slurm.partition}, {"launch.slurm.account", "--account", job.slurm.account},
        {"launch.slurm.time", "--time", job.slurm.time},
    };
    for (const auto& field : launch) {
        if (QString p = problem(QLatin1String(field.key), QLatin1String(field.flag), field.value); !p.isEmpty()) return p;
    }
    for (auto it = job.trainer.begin(); it != job.trainer.end(); ++it) {
        if (!it.value().isString()) continue;
        const QString flag = trainerFlagOf(it.key());
        if (QString p = problem(QStringLiteral("trainer.") + it.key(), flag, it.value().toString()); !p.isEmpty()) return p;
    }
    for (int i = 0; i < job.slurm.extraArgs.size(); ++i) {
        if (QString p = problem(QStringLiteral("launch.slurm.extra_args[%1]").arg(i), QString(), job.slurm.extraArgs.at(i));
            !p.isEmpty()) {
            return p;
        }
    }
    return {};
}

} // namespace ringmaster::supervisor
