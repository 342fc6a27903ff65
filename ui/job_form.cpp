#include "job_form.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonValue>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "form_widgets.h"
#include "input_pickers.h"
#include "job_options.h"
#include "preflight.h"
#include "script_fields.h"
#include "slurm_fields.h"

namespace ringmaster::ui {
namespace {

// Typing a path would otherwise probe the disk on every keystroke.
constexpr int kOutputCheckDebounceMs = 250;
// An editable combo box would otherwise grow to its longest entry (a long dataset path).
constexpr int kComboMinimumCharacters = 12;
// The probe starts once the model and data fields have been still this long.
constexpr int kProbeDebounceMs = 300;
// The trainer flags a probe needs (what it reads and builds), in the order they are passed.
const char* const kProbeKeys[] = {"model", "data", "val_data", "val_split", "label_column", "image_size",
                                  "loss", "normalize", "synthetic_samples", "batch_size"};
const char* const kAutoLoss = "auto";
const char* const kNoteStyle = "color: #455a64;";
const char* const kWarningStyle = "color: #8a5300;";
const char* const kErrorStyle = "color: #b00020;";
// The kinds of job the form describes, in the order of its "Runs" box.
enum JobKind { kBuiltInTrainer = 0, kUserScript = 1 };
// Where the job runs, in the order of its "Where" box.
enum JobPlace { kThisMachine = 0, kSlurmCluster = 1 };
// The heartbeat box's 0: a script's hang detection is off (it prints nothing regularly by contract).
constexpr double kHangDetectionOff = 0.0;

} // namespace

JobForm::JobForm(QWidget* parent)
    : QWidget(parent)
{
    m_kind = combo(this, {tr("Built-in trainer"), tr("Your script")},
                   tr("Built-in trainer: ringmaster-trainer with the model and data below. Your script: your own "
                      "torchrun-style Python training script, run unchanged on every rank"));
    m_where = combo(this, {tr("This machine"), tr("Slurm cluster")},
                    tr("This machine: the ranks run here, on the GPUs or CPU ranks picked above. Slurm cluster: the job is "
                       "submitted to Slurm as one batch job, on the nodes and GPUs Slurm allocates"));
    m_slurm = new SlurmFields(this);
    m_script = new ScriptFields(this);
    m_model = new ModelBox(this);
    m_data = combo(this, {QStringLiteral("fashion-mnist"), QStringLiteral("synthetic")},
                   tr("fashion-mnist (the Debian package), synthetic (for linear), a folder (MNIST-format IDX files, or "
                      "one sub-folder of images per class), a tensor file (.pt/.pth from torch.save) or a .csv file"));
    m_data->setEditable(true);
    m_data->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_data->setMinimumContentsLength(kComboMinimumCharacters);
    const QString dataFiles = tr("Data files (*.csv *.pt *.pth);;All files (*)");
    auto* browse = new PathBrowseButton(tr("training data"), dataFiles, [this] { return m_data->currentText(); }, this);
    connect(browse, &PathBrowseButton::picked, m_data, &QComboBox::setCurrentText);
    m_validation = new ValidationField(dataFiles, this);
    m_labelColumn = new QLineEdit(this);
    m_labelColumn->setPlaceholderText(tr("last column"));
    m_labelColumn->setToolTip(tr("The CSV column that holds the label or target (default: the last one); for .csv data only"));
    m_imageSize = new QLineEdit(this);
    m_imageSize->setPlaceholderText(tr("keep (e.g. 32,32)"));
    m_imageSize->setToolTip(tr("Resize every image to H,W pixels (e.g. 32,32); empty keeps each image's size"));
    m_loss = combo(this, {QLatin1String(kAutoLoss), QStringLiteral("cross_entropy"), QStringLiteral("mse"), QStringLiteral("bce")},
                   tr("Loss: auto (cross-entropy for class labels, MSE for regression targets), cross_entropy, mse, or bce"));
    m_modelNote = new QLabel(this);
    m_dataNote = new QLabel(this);
    for (auto* note : {m_modelNote, m_dataNote}) {
        note->setWordWrap(true); // a long summary or error wraps, never widens the panel
        note->setTextFormat(Qt::PlainText);
        note->setVisible(false);
    }
    m_probe = new DataProbe(this);
    m_epochs = spin(this, 1, 100000, 1, tr("Passes over the training set"));
    m_maxSteps = spin(this, 0, 100000000, 0, tr("Stop after this many optimizer steps (0: no limit besides epochs)"));
    m_batch = spin(this, 0, 1000000, 64, tr("Samples per rank per step; the global batch is this times the number of ranks"));
    m_globalBatch = new QLabel(this);
    m_globalBatch->setWordWrap(true); // a large batch must wrap, never widen the panel
    m_globalBatch->setToolTip(tr("Samples per optimizer step across all ranks"));
    m_lr = new QLineEdit(QStringLiteral("0.01"), this);
    m_lr->setToolTip(tr("Peak learning rate (e.g. 0.01 or 3e-4); must be > 0"));
    m_optimizer = combo(this, {QStringLiteral("sgd"), QStringLiteral("adam"), QStringLiteral("adamw")}, tr("Optimizer"));
    m_momentum = doubleSpin(this, 0, 0.999, 0.9, 3, tr("SGD momentum (ignored by Adam/AdamW)"));
    m_weightDecay = doubleSpin(this, 0, 1, 0, 5, tr("Weight decay (L2 for SGD/Adam, decoupled for AdamW)"));
    m_schedule = combo(this, {QStringLiteral("constant"), QStringLiteral("step"), QStringLiteral("cosine")},
                       tr("Learning-rate schedule after warm-up: constant, step (x0.1 every epoch), cosine (to 0 at the end)"));
    m_precision = combo(this, {QStringLiteral("fp32"), QStringLiteral("bf16"), QStringLiteral("fp16")},
                        tr("Type of the forward pass and the loss (torch.autocast): fp32, bf16, or fp16 with loss "
                           "scaling (torch.amp.GradScaler). Weights, gradients and the optimizer stay fp32"));
    m_warmup = spin(this, 0, 10000000, 0, tr("Linear warm-up steps from 0 to the learning rate"));
    m_seed = spin(this, 0, 2147483647, 42, tr("Seed for initialisation and the per-epoch shuffle (DistributedSampler semantics)"));
    m_evalEvery = spin(this, 0, 100000, 1, tr("Evaluate on the test split every N epochs (0: only at the end)"));
    m_checkpointEvery = spin(this, 0, 100000000, 0, tr("Write a checkpoint every N steps (0: at the end of each epoch)"));
    m_keepCheckpoints = spin(this, 1, 1000, 3, tr("How many checkpoints to keep (oldest are removed)"));
    m_keepBest = combo(this, {QStringLiteral("auto"), QStringLiteral("val_loss:min"), QStringLiteral("val_accuracy:max"), QStringLiteral("none")},
                       tr("Checkpoint each evaluation that beats the best so far and never rotate it away "
                          "(checkpoints/best.pt); auto: val_loss:min when there is validation"));
    m_output = new QLineEdit(QStringLiteral("runs"), this);
    m_output->setToolTip(tr("Folder where each run gets its own time-stamped run directory"));
    auto* browseOut = new QPushButton(tr("…"), this);
    browseOut->setMaximumWidth(32);
    browseOut->setToolTip(tr("Choose the output folder"));
    connect(browseOut, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Output folder"), m_output->text());
        if (!dir.isEmpty()) m_output->setText(dir);
    });
    m_maxRestarts = spin(this, 0, supervisor::kMaxRestarts, 0, tr("After a failure, restart the group from the latest checkpoint up to N times (each waits 1 s, 2 s, 4 s ... up to a minute)"));
    m_heartbeat = doubleSpin(this, kHangDetectionOff, 86400, 120, 1,
                             tr("A rank silent for this many seconds is reported hung and the group is stopped. A script's "
                                "output counts as progress; off (0) is the default for scripts"));
    m_heartbeat->setSuffix(tr(" s"));
    m_heartbeat->setSpecialValueText(tr("off"));
    m_stragglerAfter = doubleSpin(this, 0, supervisor::kMaxStragglerAfterSec, supervisor::kDefaultStragglerAfterSec, 0,
                                  tr("A rank that computes 1.2x slower than the others for this many seconds is named a straggler "
                                     "(in the log, the Ranks tab and a notification); off (0) names nobody"));
    m_stragglerAfter->setSuffix(tr(" s"));
    m_stragglerAfter->setSpecialValueText(tr("off"));

    auto* model = new QGroupBox(tr("Model and data"), this);
    auto* modelForm = wrappingForm(model);
    modelForm->addRow(tr("Model"), m_model);
    modelForm->addRow(QString(), m_modelNote);
    modelForm->addRow(tr("Training data"), fieldRow(this, m_data, browse));
    modelForm->addRow(QString(), m_dataNote);
    modelForm->addRow(tr("Validation"), m_validation);
    modelForm->addRow(tr("Label column"), m_labelColumn);
    modelForm->addRow(tr("Image size"), m_imageSize);
    modelForm->addRow(tr("Loss"), m_loss);
    auto* schedule = new QGroupBox(tr("Training"), this);
    auto* scheduleForm = wrappingForm(schedule);
    scheduleForm->addRow(tr("Epochs"), m_epochs);
    scheduleForm->addRow(tr("Max steps"), m_maxSteps);
    scheduleForm->addRow(tr("Batch per rank"), fieldRow(this, m_batch, m_globalBatch));
    scheduleForm->addRow(tr("Learning rate"), m_lr);
    scheduleForm->addRow(tr("Optimizer"), m_optimizer);
    scheduleForm->addRow(tr("Momentum"), m_momentum);
    scheduleForm->addRow(tr("Weight decay"), m_weightDecay);
    scheduleForm->addRow(tr("LR schedule"), m_schedule);
    scheduleForm->addRow(tr("Warm-up steps"), m_warmup);
    scheduleForm->addRow(tr("Precision"), m_precision);
    scheduleForm->addRow(tr("Seed"), m_seed);
    auto* outputs = new QGroupBox(tr("Evaluation, checkpoints, output"), this);
    auto* outputForm = wrappingForm(outputs);
    outputForm->addRow(tr("Eval every (epochs)"), m_evalEvery);
    outputForm->addRow(tr("Checkpoint every (steps)"), m_checkpointEvery);
    outputForm->addRow(tr("Keep checkpoints"), m_keepCheckpoints);
    outputForm->addRow(tr("Keep the best by"), m_keepBest);
    outputForm->addRow(tr("Output folder"), fieldRow(this, m_output, browseOut));
    outputForm->addRow(tr("Max restarts"), m_maxRestarts);
    outputForm->addRow(tr("Heartbeat timeout"), m_heartbeat);
    outputForm->addRow(tr("Straggler after"), m_stragglerAfter);
    m_outputForm = outputForm;
    m_trainerModel = model;
    m_trainerSchedule = schedule;
    auto* kindRow = new QWidget(this);
    auto* kindForm = new QFormLayout(kindRow);
    kindForm->setContentsMargins(0, 0, 0, 0);
    kindForm->addRow(tr("Runs"), m_kind);
    kindForm->addRow(tr("Where"), m_where);
    m_problemLabel = new QLabel(this);
    m_problemLabel->setWordWrap(true);
    m_problemLabel->setStyleSheet(QStringLiteral("color: #b00020;"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(kindRow);
    layout->addWidget(m_slurm);
    layout->addWidget(m_script);
    layout->addWidget(model);
    layout->addWidget(schedule);
    layout->addWidget(outputs);
    layout->addWidget(m_problemLabel);
    layout->addStretch(1);

    for (auto* box : {m_epochs, m_maxSteps, m_batch, m_warmup, m_seed, m_evalEvery, m_checkpointEvery, m_keepCheckpoints, m_maxRestarts}) {
        connect(box, &QSpinBox::valueChanged, this, &JobForm::revalidate);
    }
    for (auto* box : {m_momentum, m_weightDecay, m_heartbeat}) connect(box, &QDoubleSpinBox::valueChanged, this, &JobForm::revalidate);
    for (auto* box : {m_data, m_loss, m_optimizer, m_schedule, m_precision, m_keepBest}) connect(box, &QComboBox::currentTextChanged, this, &JobForm::revalidate);
    for (auto* edit : {m_lr, m_labelColumn, m_imageSize}) connect(edit, &QLineEdit::textChanged, this, &JobForm::revalidate);
    connect(m_model, &ModelBox::modelChanged, this, &JobForm::revalidate);
    connect(m_validation, &ValidationField::changed, this, &JobForm::revalidate);
    connect(m_script, &ScriptFields::changed, this, &JobForm::revalidate);
    connect(m_slurm, &SlurmFields::changed, this, &JobForm::revalidate);
    connect(m_where, &QComboBox::currentIndexChanged, this, [this] {
        showWhere();
        revalidate();
        Q_EMIT placeChanged(isSlurm());
    });
    connect(m_kind, &QComboBox::currentIndexChanged, this, [this] {
        // Each kind's own default hang detection: off for a script (it need not print regularly), on for the trainer.
        m_heartbeat->setValue(isScript() ? kHangDetectionOff : std::max(m_heartbeat->value(), supervisor::kDefaultHeartbeatTimeoutSec));
        showKind();
        showWhere(); // hang detection under Slurm depends on the kind
        revalidate();
    });
    m_probeDebounce.setSingleShot(true);
    m_probeDebounce.setInterval(kProbeDebounceMs);
    connect(&m_probeDebounce, &QTimer::timeout, this, [this] { m_probe->start(m_probeKey.first(), m_probeKey.mid(1)); });
    connect(m_probe, &DataProbe::finished, this, &JobForm::onProbed);
    connect(m_output, &QLineEdit::textChanged, this, &JobForm::scheduleOutputCheck);

    m_outputDebounce.setSingleShot(true);
    m_outputDebounce.setInterval(kOutputCheckDebounceMs);
    connect(&m_outputDebounce, &QTimer::timeout, this, &JobForm::checkOutputNow);
    connect(&m_outputWatcher, &QFutureWatcher<QString>::finished, this, &JobForm::onOutputChecked);

    const QString launch; // the launch settings have no trainer key
    m_fields = {{QStringLiteral("model"), m_model}, {QStringLiteral("data"), m_data},
                {QStringLiteral("val_data"), m_validation->pathEdit()}, {QStringLiteral("val_split"), m_validation->fractionBox()},
                {QStringLiteral("label_column"), m_labelColumn}, {QStringLiteral("image_size"), m_imageSize},
                {QStringLiteral("loss"), m_loss},
                {QStringLiteral("epochs"), m_epochs}, {QStringLiteral("max_steps"), m_maxSteps},
                {QStringLiteral("batch_size"), m_batch}, {QStringLiteral("lr"), m_lr},
                {QStringLiteral("optimizer"), m_optimizer}, {QStringLiteral("momentum"), m_momentum},
                {QStringLiteral("weight_decay"), m_weightDecay}, {QStringLiteral("lr_schedule"), m_schedule},
                {QStringLiteral("warmup_steps"), m_warmup}, {QStringLiteral("precision"), m_precision},
                {QStringLiteral("seed"), m_seed},
                {QStringLiteral("eval_every"), m_evalEvery}, {QStringLiteral("checkpoint_every"), m_checkpointEvery},
                {QStringLiteral("keep_checkpoints"), m_keepCheckpoints}, {QStringLiteral("keep_best"), m_keepBest},
                {launch, m_output}, {launch, m_maxRestarts}, {launch, m_heartbeat}, {launch, m_stragglerAfter}};
    setJob(supervisor::defaultJob(0));
}

bool JobForm::isChecking() const
{
    return m_outputPending || (isScript() && m_script->isChecking()) || (isSlurm() && m_slurm->isListing());
}

bool JobForm::isSlurm() const
{
    return m_where->currentIndex() == kSlurmCluster;
}

int JobForm::worldSize() const
{
    return isSlurm() ? m_slurm->worldSize() : m_worldSize;
}

void JobForm::showWhere()
{
    const bool slurm = isSlurm();
    m_slurm->setVisible(slurm);
    m_slurm->setActive(slurm);
    setApplies(m_maxRestarts, !slurm, tr("Not used under Slurm: Ringmaster does not restart a Slurm job"));
    // Under Slurm the trainer's heartbeats reach this machine over TCP and are watched; a script's tasks send none.
    setApplies(m_heartbeat, !slurm || !isScript(),
               tr("Not used under Slurm for a script: its tasks send no heartbeats (they are followed through their logs)"));
}

bool JobForm::isScript() const
{
    return m_kind->currentIndex() == kUserScript;
}

void JobForm::showKind()
{
    const bool script = isScript();
    m_script->setVisible(script);
    m_script->setActive(script);
    m_trainerModel->setVisible(!script);
    m_trainerSchedule->setVisible(!script);
    // Evaluation and checkpoints are the trainer's; a script does its own. Step timing is the trainer's too.
    for (QWidget* trainerOnly : {static_cast<QWidget*>(m_evalEvery), static_cast<QWidget*>(m_checkpointEvery),
                                 static_cast<QWidget*>(m_keepCheckpoints), static_cast<QWidget*>(m_keepBest),
                                 static_cast<QWidget*>(m_stragglerAfter)}) { // a script's steps are not timed
        m_outputForm->setRowVisible(trainerOnly, !script);
    }
}

void JobForm::setWorldSize(int ranks)
{
    m_worldSize = ranks;
    revalidate();
}

void JobForm::scheduleOutputCheck()
{
    // The result for older text must not count: pending until the check for this text is back.
    m_outputPending = !m_output->text().trimmed().isEmpty();
    if (m_outputPending) m_outputDebounce.start();
    else m_outputDebounce.stop();
    revalidate();
}

void JobForm::checkOutputNow()
{
    m_outputInFlight = m_output->text().trimmed();
    // checkOutputFolder creates and removes a probe file: off the GUI thread (a slow or hung mount).
    m_outputWatcher.setFuture(QtConcurrent::run([folder = m_outputInFlight] { return supervisor::checkOutputFolder(folder); }));
}

void JobForm::onOutputChecked()
{
    if (m_outputInFlight != m_output->text().trimmed()) return; // the text changed since: a newer check follows
    m_outputChecked = m_outputInFlight;
    m_outputProblem = m_outputWatcher.result();
    m_outputPending = m_outputDebounce.isActive();
    revalidate();
}

QString JobForm::datasetProblem(const QString& data, bool* dataAtFault)
{
    *dataAtFault = false;
    // The trainer's own count once its probe has answered for these fields (after any hold-out).
    qint64 samples = m_probeOutcome.trainSamples();
    if (samples < 0) {
        // Meanwhile the count the form can read itself: the built-in sets and an IDX folder's header.
        if (m_validation->mode() == ValidationField::Mode::HoldOut || (!isBuiltinData(data) && !isIdxFolder(data))) return {};
        const qint64 synthetic = integerOption(m_base.trainer, "synthetic_samples", kSyntheticDefaultSamples);
        const QString key = data + QLatin1Char('\n') + QString::number(synthetic);
        if (key != m_sizeFor) { // reads a file header for a folder: once per dataset, not per keystroke elsewhere
            m_size = trainingSetSize(data, synthetic);
            m_sizeFor = key;
        }
        *dataAtFault = m_size.samples < 0;
        if (*dataAtFault) return tr("Dataset: %1.").arg(m_size.error);
        samples = m_size.samples;
    }
    if (worldSize() < 1 || m_batch->value() < 1) return {};
    const qint64 shard = shardSize(samples, worldSize(), boolOption(m_base.trainer, "drop_last"));
    if (m_batch->value() <= shard) return {};
    return tr("Batch per rank %1 is larger than each rank's shard of %2 samples (%3 training samples over %4 ranks): "
              "use at most %2.").arg(m_batch->value()).arg(shard).arg(samples).arg(worldSize());
}

void JobForm::revalidate()
{
    QStringList problems;
    bool badBatch = m_batch->value() < 1;
    if (badBatch) problems << tr("Batch per rank must be at least 1.");
    bool lrOk = false;
    const double lr = m_lr->text().trimmed().toDouble(&lrOk);
    const bool badLr = !lrOk || !(lr > 0);
    if (badLr) problems << tr("Learning rate must be a number above 0 (e.g. 0.01 or 3e-4).");
    mark(m_lr, badLr);
    if (worldSize() < 1) problems << tr("No ranks: select at least one GPU, or set CPU ranks to 1 or more.");
    const QString output = m_output->text().trimmed();
    QString outputProblem;
    if (output.isEmpty()) outputProblem = tr("Choose an output folder.");
    else if (!m_outputPending && output == m_outputChecked) outputProblem = m_outputProblem;
    if (!outputProblem.isEmpty()) problems << tr("Output folder: %1").arg(outputProblem);
    mark(m_output, !outputProblem.isEmpty());

    const bool badHeartbeat = !isScript() && m_heartbeat->value() <= kHangDetectionOff;
    if (badHeartbeat) problems << tr("Heartbeat timeout must be above 0 s for the built-in trainer (off is for scripts).");
    mark(m_heartbeat, badHeartbeat);
    if (isSlurm()) problems << m_slurm->problems();
    if (isScript()) {
        problems << m_script->problems();
        requestProbe(false); // the trainer's probe describes the trainer's model and data only
        finishValidation(problems);
        return;
    }

    // What the form can tell at once; the trainer's probe checks the rest.
    const QString data = m_data->currentText().trimmed();
    const QString model = m_model->model();
    const bool linear = model == QLatin1String("linear");
    bool badData = false;
    if (data.isEmpty()) {
        problems << tr("Choose the training data: fashion-mnist, synthetic, a folder or a file.");
        badData = true;
    } else if (isBuiltinData(data) && linear != (data == QLatin1String("synthetic"))) {
        problems << (linear ? tr("The linear model trains on the synthetic dataset.")
                            : tr("The synthetic dataset is for the linear model."));
        badData = true;
    } else if (!isBuiltinData(data) && !QFileInfo::exists(data)) {
        problems << tr("Training data %1 does not exist.").arg(data);
        badData = true;
    }
    bool badModel = m_model->isFile() && !QFileInfo(model).isFile();
    if (badModel) problems << tr("Model file %1 does not exist.").arg(model);
    const QString validation = m_validation->pathEdit()->text().trimmed();
    const bool badValidation = m_validation->mode() == ValidationField::Mode::Path && !QFileInfo::exists(validation);
    if (badValidation) {
        problems << (validation.isEmpty() ? tr("Validation: choose a file or folder, or None.")
                                          : tr("Validation data %1 does not exist.").arg(validation));
    }
    const QString imageSize = m_imageSize->text().trimmed();
    const bool badImageSize = !imageSize.isEmpty() && !validImageSize(imageSize);
    if (badImageSize) problems << tr("Image size must be H,W in pixels (e.g. 32,32), or empty to keep each image's size.");
    m_labelColumn->setEnabled(isCsv(data));

    requestProbe(!badData && !badModel && !badValidation && !badImageSize && !badBatch);
    if (m_probeOutcome.kind == ProbeOutcome::Kind::Rejected) {
        problems << m_probeOutcome.message;
        (m_probeOutcome.concernsModel() ? badModel : badData) = true;
    }
    if (!badData) {
        bool dataAtFault = false;
        if (const QString problem = datasetProblem(data, &dataAtFault); !problem.isEmpty()) {
            problems << problem;
            badData = dataAtFault;
            badBatch = !dataAtFault;
        }
    }
    mark(m_data, badData);
    mark(m_model, badModel);
    mark(m_validation->pathEdit(), badValidation);
    mark(m_imageSize, badImageSize);
    mark(m_batch, badBatch);
    m_momentum->setEnabled(m_optimizer->currentText() == QLatin1String("sgd"));
    m_globalBatch->setText(tr("global %1 (%2 × %3 ranks)").arg(qint64(m_batch->value()) * std::max(worldSize(), 0))
                               .arg(m_batch->value()).arg(worldSize()));
    finishValidation(problems);
}

void JobForm::finishValidation(const QStringList& problems)
{
    m_problemLabel->setText(problems.join(QLatin1Char('\n')));
    m_problemLabel->setVisible(!problems.isEmpty());
    if (problems != m_problems || isValid() != m_lastValid || isChecking() != m_lastPending) {
        m_problems = problems;
        m_lastValid = isValid();
        m_lastPending = isChecking();
        Q_EMIT validityChanged(m_lastValid, m_problems);
    }
}

QStringList JobForm::probeArguments() const
{
    // The flags the run itself would get, from the job the form describes (unset ones are absent).
    const supervisor::JobSpec described = job(QStringLiteral("cpu"), 1, {});
    QStringList arguments;
    for (const char* key : kProbeKeys) {
        const QJsonValue value = described.trainer.value(QLatin1String(key));
        if (value.isUndefined() || value.isNull()) continue;
        arguments << QStringLiteral("--") + QString::fromLatin1(key).replace(QLatin1Char('_'), QLatin1Char('-'))
                  << supervisor::flagValueText(value);
    }
    arguments << QStringLiteral("--probe");
    return arguments;
}

QString JobForm::heldInput() const
{
    for (const QString& shown : {m_model->model(), m_data->currentText().trimmed(), m_validation->pathEdit()->text().trimmed()}) {
        if (!shown.isEmpty() && m_heldInputs.contains(shown)) return shown;
    }
    return {};
}

void JobForm::requestProbe(bool inputsChecked)
{
    QStringList key;
    // The trainer the app found itself, never a job file's trainer_path (that one is checked at Start).
    if (inputsChecked && heldInput().isEmpty()) key = QStringList{supervisor::locateTrainer(supervisor::JobSpec{})} + probeArguments();
    if (key == m_probeKey) return; // an edit elsewhere (the world size, the learning rate): the answer stands
    m_probeKey = key;
    m_probe->cancel();
    m_probeOutcome = {};
    m_probePending = !key.isEmpty();
    if (m_probePending) m_probeDebounce.start();
    else m_probeDebounce.stop();
    showProbe();
}

void JobForm::onProbed(const ProbeOutcome& outcome)
{
    m_probeOutcome = outcome;
    m_probePending = false;
    showProbe();
    revalidate();
}

void JobForm::showProbe()
{
    auto show = [](QLabel* note, const QString& text, const char* style) {
        note->setText(text);
        note->setStyleSheet(QLatin1String(style));
        note->setVisible(!text.isEmpty());
    };
    const ProbeOutcome& outcome = m_probeOutcome;
    if (const QString held = heldInput(); !held.isEmpty()) {
        const bool model = held == m_model->model();
        const QString note = tr("%1 is named by the job file: read only when you press Start (a TorchScript model or a "
                                "tensor file runs code of its own in LibTorch)")
                                 .arg(QFileInfo(held).fileName());
        show(m_modelNote, model ? note : QString(), kNoteStyle);
        show(m_dataNote, model ? QString() : note, kNoteStyle);
    } else if (m_probePending) {
        show(m_modelNote, tr("checking…"), kNoteStyle);
        show(m_dataNote, tr("checking…"), kNoteStyle);
    } else if (outcome.answered()) {
        show(m_modelNote, modelSummary(outcome.report.value(QStringLiteral("model")).toObject()), kNoteStyle);
        show(m_dataNote, dataSummary(outcome.report.value(QStringLiteral("data")).toObject()), kNoteStyle);
    } else if (outcome.kind == ProbeOutcome::Kind::Rejected) {
        show(m_modelNote, outcome.concernsModel() ? outcome.message : QString(), kErrorStyle);
        show(m_dataNote, outcome.concernsModel() ? QString() : outcome.message, kErrorStyle);
    } else {
        show(m_modelNote, QString(), kNoteStyle);
        show(m_dataNote, outcome.message, outcome.kind == ProbeOutcome::Kind::Unsupported ? kNoteStyle : kWarningStyle);
    }
}

void JobForm::setJob(const supervisor::JobSpec& job, JobSource source)
{
    m_base = job;
    const QJsonObject& t = job.trainer;
    m_heldInputs.clear();
    if (source == JobSource::File) {
        // A TorchScript model runs its own operators and a tensor file goes through LibTorch's unpickler: a
        // file from someone else that names one is read at Start, not by the probe. Folders (IDX, images) and
        // CSV tables are data, and the app's own trainer may read them now.
        const QString model = textOption(t, "model", QString());
        if (!model.isEmpty() && !isBuiltinModel(model)) m_heldInputs << model;
        for (const char* key : {"data", "val_data"}) {
            const QString path = textOption(t, key, QString());
            if (!path.isEmpty() && !isBuiltinData(path) && !QFileInfo(path).isDir() && !isCsv(path)) m_heldInputs << path;
        }
    }
    m_script->setJob(job, source == JobSource::File);
    m_model->setModel(textOption(t, "model", QStringLiteral("cnn")));
    m_data->setCurrentText(textOption(t, "data", QStringLiteral("fashion-mnist")));
    const QString validation = textOption(t, "val_data", QString());
    const double holdOut = realOption(t, "val_split", 0);
    m_validation->pathEdit()->setText(validation);
    if (holdOut > 0) m_validation->fractionBox()->setValue(holdOut);
    m_validation->setMode(!validation.isEmpty() ? ValidationField::Mode::Path
                          : holdOut > 0         ? ValidationField::Mode::HoldOut
                                                : ValidationField::Mode::None);
    m_labelColumn->setText(textOption(t, "label_column", QString()));
    m_imageSize->setText(textOption(t, "image_size", QString()));
    m_loss->setCurrentIndex(0); // auto, unless the job names a loss this list has
    m_loss->setCurrentText(textOption(t, "loss", QLatin1String(kAutoLoss)));
    m_epochs->setValue(static_cast<int>(integerOption(t, "epochs", 1)));
    m_maxSteps->setValue(static_cast<int>(integerOption(t, "max_steps", 0)));
    m_batch->setValue(static_cast<int>(integerOption(t, "batch_size", 64)));
    m_lr->setText(textOption(t, "lr", QStringLiteral("0.01")));
    m_optimizer->setCurrentText(textOption(t, "optimizer", QStringLiteral("sgd")));
    m_momentum->setValue(realOption(t, "momentum", 0.9));
    m_weightDecay->setValue(realOption(t, "weight_decay", 0));
    m_schedule->setCurrentText(textOption(t, "lr_schedule", QStringLiteral("constant")));
    m_warmup->setValue(static_cast<int>(integerOption(t, "warmup_steps", 0)));
    m_precision->setCurrentText(textOption(t, "precision", QStringLiteral("fp32")));
    m_seed->setValue(static_cast<int>(integerOption(t, "seed", 42)));
    m_evalEvery->setValue(static_cast<int>(integerOption(t, "eval_every", 1)));
    m_checkpointEvery->setValue(static_cast<int>(integerOption(t, "checkpoint_every", 0)));
    m_keepCheckpoints->setValue(static_cast<int>(integerOption(t, "keep_checkpoints", 3)));
    const QString keepBest = textOption(t, "keep_best", QStringLiteral("auto"));
    if (m_keepBest->findText(keepBest) < 0) m_keepBest->addItem(keepBest); // a rule of the job file's own, kept
    m_keepBest->setCurrentText(keepBest);
    m_output->setText(job.outputRoot);
    m_maxRestarts->setValue(job.maxRestarts);
    m_heartbeat->setValue(job.isScript() && !job.heartbeatTimeoutGiven ? kHangDetectionOff : job.heartbeatTimeoutSec);
    m_stragglerAfter->setValue(job.stragglerAfterSec);
    m_slurm->setJob(job);
    m_kind->setCurrentIndex(job.isScript() ? kUserScript : kBuiltInTrainer);
    m_where->setCurrentIndex(job.slurm.enabled ? kSlurmCluster : kThisMachine);
    showKind();
    showWhere();
    // What the widgets show now (after their ranges and decimals) stands for the loaded values.
    m_loadedValues = shownValues();
    m_sizeFor.clear(); // synthetic_samples may differ
    scheduleOutputCheck(); // also when the folder text is unchanged: the disk may have changed
}

QJsonValue JobForm::valueOf(const QWidget* widget) const
{
    if (widget == m_lr) {
        bool ok = false;
        const double lr = m_lr->text().trimmed().toDouble(&ok);
        return ok ? QJsonValue(lr) : QJsonValue(m_lr->text().trimmed());
    }
    if (widget == m_data) return m_data->currentText().trimmed();
    if (widget == m_model) return m_model->model();
    // Unset (undefined) values are not written: a job without them stays without them.
    const QJsonValue unset(QJsonValue::Undefined);
    const auto mode = m_validation->mode();
    const QString text = qobject_cast<const QLineEdit*>(widget) ? static_cast<const QLineEdit*>(widget)->text().trimmed() : QString();
    if (widget == m_validation->pathEdit()) return mode == ValidationField::Mode::Path && !text.isEmpty() ? QJsonValue(text) : unset;
    if (widget == m_validation->fractionBox()) return mode == ValidationField::Mode::HoldOut ? QJsonValue(m_validation->fractionBox()->value()) : unset;
    if (widget == m_labelColumn) return isCsv(m_data->currentText().trimmed()) && !text.isEmpty() ? QJsonValue(text) : unset;
    if (widget == m_imageSize) return text.isEmpty() ? unset : QJsonValue(text);
    if (widget == m_loss) return m_loss->currentText() == QLatin1String(kAutoLoss) ? unset : QJsonValue(m_loss->currentText());
    if (widget == m_output) return m_output->text().trimmed();
    if (const auto* box = qobject_cast<const QSpinBox*>(widget)) return QJsonValue(qint64(box->value()));
    if (const auto* box = qobject_cast<const QDoubleSpinBox*>(widget)) return box->value();
    if (const auto* box = qobject_cast<const QComboBox*>(widget)) return box->currentText();
    return {};
}

QList<QJsonValue> JobForm::shownValues() const
{
    QList<QJsonValue> values;
    for (const auto& field : m_fields) values.append(valueOf(field.widget));
    return values;
}

supervisor::JobSpec JobForm::job(const QString& device, int cpuRanks, const QList<int>& gpus) const
{
    supervisor::JobSpec job = m_base;
    job.device = device;
    job.gpus = gpus;
    job.nproc = device == QLatin1String("cuda") ? static_cast<int>(gpus.size()) : cpuRanks;
    if (isSlurm()) m_slurm->apply(&job);   // the allocation decides: not this machine's GPUs
    else job.slurm = {};
    const QList<QJsonValue> values = shownValues();
    if (isScript()) {
        m_script->apply(&job);
        job.trainer = QJsonObject(); // the trainer's flags are not a script's
        job.outputRoot = m_output->text().trimmed();
        job.maxRestarts = m_maxRestarts->value();
        job.heartbeatTimeoutGiven = m_heartbeat->value() > kHangDetectionOff;
        if (job.heartbeatTimeoutGiven) job.heartbeatTimeoutSec = m_heartbeat->value();
        return job;
    }
    // A built-in job: none of a script's settings, and when the loaded job was a script, every field as shown
    // (its trainer section was empty, so "untouched" would leave the trainer's own defaults, not the form's).
    const bool fromScript = job.isScript();
    job.script.clear();
    job.scriptArgs.clear();
    job.python = QString::fromLatin1(supervisor::kDefaultPython);
    job.metricPatterns.clear();
    job.tensorboardDir.clear();
    if (fromScript) job.heartbeatTimeoutGiven = true;
    for (int i = 0; i < m_fields.size(); ++i) {
        if (!fromScript && i < m_loadedValues.size() && values.at(i) == m_loadedValues.at(i)) continue; // untouched: the loaded value stands
        const Field& field = m_fields.at(i);
        if (!field.trainerKey.isEmpty() && values.at(i).isUndefined()) job.trainer.remove(field.trainerKey);
        else if (!field.trainerKey.isEmpty()) job.setTrainerOption(field.trainerKey, values.at(i));
        else if (field.widget == m_output) job.outputRoot = values.at(i).toString();
        else if (field.widget == m_maxRestarts) job.maxRestarts = m_maxRestarts->value();
        else if (field.widget == m_heartbeat) job.heartbeatTimeoutSec = m_heartbeat->value();
        else if (field.widget == m_stragglerAfter) job.stragglerAfterSec = m_stragglerAfter->value();
    }
    return job;
}

} // namespace ringmaster::ui
