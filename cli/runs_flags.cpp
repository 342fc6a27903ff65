#include "cli/runs_flags.h"

#include "runs/run_files.h"

namespace ringmaster::cli {

using runs::RunsError;

ParsedFlags parseFlags(const QString& subcommand, const QStringList& arguments, const QStringList& valued, const QStringList& switches)
{
    ParsedFlags parsed;
    for (int i = 0; i < arguments.size(); ++i) {
        QString argument = arguments[i];
        if (!argument.startsWith(QStringLiteral("--"))) {
            parsed.positional << argument;
            continue;
        }
        QString value;
        bool hasValue = false;
        if (const auto equals = argument.indexOf(QLatin1Char('=')); equals > 2) {
            value = argument.mid(equals + 1);
            argument = argument.left(equals);
            hasValue = true;
        }
        if (switches.contains(argument) && !hasValue) {
            parsed.switches.insert(argument);
        } else if (valued.contains(argument)) {
            if (!hasValue) {
                if (i + 1 >= arguments.size()) throw RunsError(QStringLiteral("%1 needs a value: e.g. %1 FILE").arg(argument));
                value = arguments[++i];
            }
            if (value.isEmpty()) throw RunsError(QStringLiteral("%1 needs a value: e.g. %1 FILE").arg(argument));
            parsed.values[argument] << value;
        } else {
            throw RunsError(QStringLiteral("%1 %2: unknown flag: see %3 --help").arg(subcommand, argument, QString::fromLatin1(kRunsProgram)));
        }
    }
    return parsed;
}

QString singleValue(const ParsedFlags& parsed, const QString& flag)
{
    const QStringList values = parsed.values.value(flag);
    if (values.size() > 1) throw RunsError(QStringLiteral("%1 given %2 times: give it once").arg(flag).arg(values.size()));
    return values.isEmpty() ? QString() : values.first();
}

} // namespace ringmaster::cli
