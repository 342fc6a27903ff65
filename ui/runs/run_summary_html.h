#pragma once
// The Runs tab's summary pane as rich text: for each opened run its label, folder and notes; for a single
// run its whole summary.json, key by key, as the trainer or launcher wrote it; and what could not be read.
// Kept apart from the panel so that the panel holds only the tab's wiring.

#include <QList>
#include <QString>

#include "runs/run_record.h"

namespace ringmaster::ui {

QString runSummaryHtml(const QList<runs::RunRecord>& records);

} // namespace ringmaster::ui
