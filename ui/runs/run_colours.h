#pragma once
// The colour each run is drawn in when runs are compared (the Runs tab's chart, its table's swatches). A
// run the user gave a colour (notes.json, core/runs run_notes.h) keeps that one; any other run gets a
// colour from a ten-colour palette picked by a fixed hash (FNV-1a) of its directory's name, so the same
// run has the same colour at every refresh, re-open and start of the app, without storing anything.
// compareColours gives the runs of one comparison distinct colours where it can: a run whose automatic
// colour is already taken in that comparison moves to the next free one of the palette.

#include <QColor>
#include <QList>
#include <QString>

namespace ringmaster::runs {
struct RunRecord;
}

namespace ringmaster::ui {

// The automatic colour of the run directory named DIRNAME (its last path component).
QColor automaticRunColour(const QString& dirName);
// The user's colour when it has one, else the automatic one.
QColor runColour(const runs::RunRecord& run);
// One colour per run, in the order given, distinct among the automatic ones where the palette allows.
QList<QColor> compareColours(const QList<runs::RunRecord>& runs);

} // namespace ringmaster::ui
