#pragma once
// Rank 0's live TensorBoard event file, so that `tensorboard --logdir runs` shows a run as it trains:
// RUN_DIR/tb/events.out.tfevents.<unix seconds>.<hostname>.<pid>, a file_version "brain.Event:2" record, then
// one Event{wall_time, step, summary{value{tag, simple_value}}} per scalar (the format is in
// core/protocol/tensorboard_records.h, shared with the supervisor's reader). Each call's records go to the
// file in one write(2), with no user-space buffer, so a reader sees them at once. The file is a convenience
// beside metrics.csv, never a reason to fail a run: the first error (cannot create, cannot write) logs one
// warning naming the file and the reason and turns the writer off.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/run_layout.h"

namespace ringmaster::trainer {

// The folder (RUN_DIR/tb) and the tags the trainer writes are the run directory's (core/protocol/run_layout.h): each
// tag is the CSV column it repeats (protocol::column: loss, lr, samples_per_sec, val_loss, val_accuracy).

class TensorBoardWriter
{
public:
    struct Scalar
    {
        std::string tag;
        double value = 0.0; // written as a float32 simple_value, as TensorBoard's own writers do
    };

    // RUN_DIR/tb/events.out.tfevents.<unix seconds>.<hostname>.<pid>, with RUN_DIR/tb created; the seconds are
    // later than those of every event file already there, so TensorBoard reads this one last.
    static std::unique_ptr<TensorBoardWriter> forRunDir(const std::string& runDir);

    // Creates (truncates) path and writes the file_version record.
    explicit TensorBoardWriter(std::string path);
    ~TensorBoardWriter();
    TensorBoardWriter(const TensorBoardWriter&) = delete;
    TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

    // One Event per scalar, all stamped with the current Unix time (or wallTime), written together.
    void writeScalars(std::int64_t step, const std::vector<Scalar>& scalars);
    void writeScalars(std::int64_t step, const std::vector<Scalar>& scalars, double wallTime);

    bool enabled() const { return m_fd >= 0; }
    const std::string& path() const { return m_path; }

private:
    void append(const std::string& bytes);
    void disable(const char* action, int errnoValue);

    std::string m_path;
    int m_fd = -1;
};

} // namespace ringmaster::trainer
