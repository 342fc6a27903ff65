#pragma once
// The data one run trains on, whatever its source: --data detects the format (IDX folder, image folder,
// tensor file, CSV, the built-ins), --val-data / --val-split / the IDX test split give the validation
// set, and the class count, the target shape and the input transform follow from what was read. Inputs
// stay in the source's compact type (uint8 images); inputsAt() converts one batch to float32: uint8
// images scaled to [0, 1], then standardised per channel with the training split's statistics (or
// --normalize). Every rank computes the same result from the same files and seed without talking.

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/data/loaded_data.h"

namespace ringmaster::trainer {

enum class DataFormat { Idx, ImageFolder, TensorFile, Csv, Synthetic };
const char* formatName(DataFormat format); // idx | image-folder | tensor-file | csv | synthetic

struct DataOptions
{
    std::string data;                 // --data
    std::string valData;              // --val-data ("" none)
    double valSplit = 0.0;            // --val-split
    std::string labelColumn;          // --label-column (CSV)
    ImageSize imageSize;              // --image-size
    std::string normalize = "auto";   // --normalize auto|none|M,S|M1..MC,S1..SC
    std::int64_t syntheticSamples = 4096;
    std::uint64_t seed = 0;           // --val-split's shuffle and the synthetic set
    std::string cacheDir;             // --data-cache: "" the default folder, "off" read every time
};

// Rows of a source's tensors: all of them, or those in `rows` (a held-out split shares the source's
// memory instead of copying it).
struct DataSplit
{
    torch::Tensor inputs;  // the source's (may alias a read-only shared mapping: never modify in place)
    torch::Tensor targets; // int64 [N] classes or float32 [N, K]
    torch::Tensor rows;    // int64 indices into inputs/targets; undefined: every row
    std::int64_t size() const;
    // `pinned`: gathered straight into page-locked host memory, ready for a non-blocking copy to a GPU.
    torch::Tensor targetsAt(const torch::Tensor& indices, bool pinned = false) const;
    torch::Tensor rawInputsAt(const torch::Tensor& indices, bool pinned = false) const;
};

struct TrainingData
{
    DataFormat format = DataFormat::Idx;
    std::string path;                 // the folder or file read ("" for synthetic)
    DataSplit train;
    DataSplit val;                    // size 0 when there is no validation set
    std::string valSource = "none";   // test-split | file | split | none
    std::vector<std::string> classNames;  // image folders and CSV string labels; empty otherwise
    std::int64_t classCount = 0;      // 0: float targets
    std::vector<std::int64_t> sampleShape; // one input, e.g. {1, 28, 28} or {10}
    bool scaleToUnit = false;         // uint8 images: divide by 255 before standardising
    std::vector<double> mean, std;    // one per channel (or one for all); empty: no standardisation
    std::string normalization = "none"; // how mean/std were chosen: documented | computed | given | none
    std::string description;

    // Float32 inputs for these indices of `split`, transformed as above, on the batch device. Indices live
    // where the data does (dataDevice()). Data held on the host for a GPU: each batch is gathered into pinned
    // memory in its compact type, copied once without blocking, and converted and standardised on the GPU.
    torch::Tensor inputsAt(const DataSplit& split, const torch::Tensor& indices) const;
    // The targets of these indices, on the batch device.
    torch::Tensor batchTargetsAt(const DataSplit& split, const torch::Tensor& indices) const;
    // Targets as the loss wants them: CE int64 [B]; MSE/BCE float32 [B, K].
    void targetsToFloat();
    // Batches are computed on `device`; `resident`: the compact data moves there too (no batch crosses
    // PCIe), else it stays in host memory. The standardisation constants are made there once.
    void placeOn(const torch::Device& device, bool resident);
    torch::Device dataDevice() const;
    torch::Device batchDevice() const { return m_batchDevice; }
    std::int64_t compactBytes() const; // what placeOn(..., true) would move

private:
    bool streamsToDevice() const { return m_batchDevice.is_cuda() && !dataDevice().is_cuda(); }
    torch::Device m_batchDevice{torch::kCPU};
    torch::Tensor m_meanTensor, m_stdTensor; // per channel, [1, C, 1, ...], on the batch device
};

// Reads and checks everything; throws UsageError with one line naming the flag, the file and the problem.
TrainingData loadTrainingData(const DataOptions& options);

// Parses --image-size H,W ("" -> no resize). Throws UsageError.
ImageSize parseImageSize(const std::string& text);

} // namespace ringmaster::trainer
