#pragma once
// Control characters (a newline, a carriage return, NUL, escape, …) have no place in a job's paths and names.
// A job file may come from someone else: in a Slurm batch script a newline ends a comment line and starts a
// command (a run directory "runs/z\ntouch INJECTED #" ran `touch`), in a log line it forges another line, and
// a NUL cuts a path short. Every path and name of a job is checked: JobSpec::fromJson for files, pre-flight
// for flags and the app; the batch script writer refuses any that reaches it.

#include <QString>

namespace ringmaster::supervisor {

struct JobSpec;

// The first control character (C0, DEL, C1) in `text`, named for a message ("a newline (\n)", "NUL (\0)",
// "U+001B"); empty when there is none.
QString controlCharacterIn(const QString& text);

// Empty when no path or name of `job` holds a control character; else one line naming the key and its flag,
// e.g. "\"launch.run_dir\" (--out) holds a newline (\n): paths and names cannot hold control characters".
// Checked: the launch paths (output root, run directory, resume, trainer, script, interpreter, TensorBoard
// folder), the device, every string value of "trainer" (model, data, ...), and the Slurm request's names,
// time and extra arguments. A script's arguments and the metric patterns are quoted words, not checked.
QString controlCharacterProblem(const JobSpec& job);

} // namespace ringmaster::supervisor
