#pragma once
// The flag parsing of ringmaster-runs's subcommands, shared by runs_command.cpp and the plot subcommand
// (runs_plot_command.cpp, a library of its own because it links widgets). "--name=value" and
// "--name value" both work; an unknown flag or a missing value is a RunsError naming it.

#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>

namespace ringmaster::cli {

inline constexpr const char* kRunsProgram = "ringmaster-runs";

// The arguments of one subcommand: flags with values, switches and the other (positional) words.
struct ParsedFlags
{
    QMap<QString, QStringList> values;
    QSet<QString> switches;
    QStringList positional;
};

// Any flag not in VALUED or SWITCHES is bad input (runs::RunsError).
ParsedFlags parseFlags(const QString& subcommand, const QStringList& arguments, const QStringList& valued, const QStringList& switches);
// The flag's value ("" when not given); a RunsError when it was given more than once.
QString singleValue(const ParsedFlags& parsed, const QString& flag);

} // namespace ringmaster::cli
