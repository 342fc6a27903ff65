#pragma once
// The TensorBoard half of "a run directory holds one timeline" (run_recorder.h is the CSV half). Before rank 0
// opens its new event file, the event files already in RUN_DIR/tb are made to agree with the CSVs: on a resume
// from step S each file keeps only its records up to step S (the file_version record included); on a fresh start
// over an earlier run they go. When the abandoned timeline's checkpoints were moved aside (abandonedDir), the
// files as they were go there too, into abandonedDir/tb/, beside its CSVs. Without this TensorBoard would draw
// the abandoned attempt's steps and the resumed ones as one zig-zag line: for a file_version 2 event file it
// purges old steps only on a SessionLog START event, which no scalar writer sends.
// Like the event file itself this is a convenience: a file that cannot be rewritten logs one warning naming it
// and the run goes on (metrics.csv is the durable record).

#include <cstdint>
#include <string>
#include <string_view>

namespace ringmaster::trainer {

// resumeStep < 0: a fresh start (every event file goes); otherwise records past resumeStep go.
void settleTensorBoardTimeline(const std::string& runDir, std::int64_t resumeStep, const std::string& abandonedDir);

// The records of an event file's bytes whose Event step is <= lastStep, framed as they were. A record that is
// not an Event, or one whose checksum fails, is dropped; so is everything after lost framing or a torn tail.
std::string eventRecordsUpTo(std::string_view bytes, std::int64_t lastStep);

} // namespace ringmaster::trainer
