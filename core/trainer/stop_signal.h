#pragma once
// SIGTERM/SIGINT ask for a graceful stop: the flag is read once per step and agreed on by all ranks
// (it rides on the loss all-reduce), so every rank stops after the same step. A second signal kills.

namespace ringmaster::trainer {

void installStopHandlers();
bool stopRequested();
// The signal that asked for the stop (0 if none).
int stopSignal();
// SIGUSR1 asks rank 0 for a checkpoint after the current step ("Checkpoint now" in the GUI).
// Returns true once per request.
bool takeCheckpointRequest();

} // namespace ringmaster::trainer
