#pragma once
// How `ringmaster-runs list` shows runs on a terminal: one aligned row per run (name, started, status,
// kind, model, world, steps, final loss, best val acc, duration; "-" where a run did not record a field)
// and, under a damaged run, one indented line per problem.

#include <QList>
#include <QString>

#include "runs/run_record.h"

namespace ringmaster::cli {

QString formatRunTable(const QList<runs::RunRecord>& runs);
// 3725.4 s -> "1:02:05".
QString formatDuration(double seconds);

} // namespace ringmaster::cli
