// How the job form is put together (job_form.h): the constructor and its named parts, one group of fields or
// one set of connections each, in the order it calls them (which is also the order Tab visits the fields). What
// the form does with a job (validation, the probe, setJob and job()) is in job_form.cpp.
#include "ui/form/job_form.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/form/form_widgets.h"
#include "ui/form/input_pickers.h"
#include "ui/form/job_options.h"
#include "ui/form/script_fields.h"
#include "ui/form/slurm_fields.h"
#include "ui/form/trainer_option_fields.h"

namespace ringmaster::ui {
namespace {

// Typing a path would otherwise probe the disk on every keystroke.
constexpr int kOutputCheckDebounceMs = 250;
// An editable combo box would otherwise grow to its longest entry (a long dataset path).
constexpr int kComboMinimumCharacters = 12;
// The probe starts once the model and data fields have been still this long.
constexpr int kProbeDebounceMs = 300;

} // namespace

JobForm::JobForm(QWidget* parent)
    : QWidget(parent)
{
    // The fields are made in the order they are shown, which is also the order Tab visits them.
    createKindAndPlace();
    m_trainerModel = buildModelAndData();
    m_trainerSchedule = buildTraining();
    QGroupBox* outputs = buildOutputs();
    nameFields(); // and the fields of every other trainer option, made from the option table
    layOut(outputs);
    connectFields();
    setJob(supervisor::defaultJob(0));
}

// What runs (the built-in trainer or a script) and where (this machine or Slurm), with the script's and Slurm's fields.
void JobForm::createKindAndPlace()
{
    m_kind = combo(this, {tr("Built-in trainer"), tr("Your script")},
                   tr("Built-in trainer: ringmaster-trainer with the model and data below. Your script: your own "
                      "torchrun-style Python training script, run unchanged on every rank"));
    m_where = combo(this, {tr("This machine"), tr("Slurm cluster")},
                    tr("This machine: the ranks run here, on the GPUs or CPU ranks picked above. Slurm cluster: the job is "
                       "submitted to Slurm as one batch job, on the nodes and GPUs Slurm allocates"));
    m_slurm = new SlurmFields(this);
    m_script = new ScriptFields(this);
}

// The built-in trainer's model, data, validation and loss, with the notes the data probe fills in.
QGroupBox* JobForm::buildModelAndData()
{
    m_model = new ModelBox(this);
    m_data = optionCombo(this, "data");
    m_data->setEditable(true);
    m_data->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_data->setMinimumContentsLength(kComboMinimumCharacters);
    const QString dataFiles = tr("Data files (*.csv *.pt *.pth);;All files (*)");
    auto* browse = new PathBrowseButton(tr("training data"), dataFiles, [this] { return m_data->currentText(); }, this);
    connect(browse, &PathBrowseButton::picked, m_data, &QComboBox::setCurrentText);
    m_validation = new ValidationField(dataFiles, this);
    m_labelColumn = new QLineEdit(this);
    m_labelColumn->setPlaceholderText(tr("last column"));
    m_labelColumn->setToolTip(optionTip("label_column"));
    m_imageSize = new QLineEdit(this);
    m_imageSize->setPlaceholderText(tr("keep (e.g. 32,32)"));
    m_imageSize->setToolTip(optionTip("image_size"));
    m_loss = optionCombo(this, "loss");
    m_modelNote = new QLabel(this);
    m_dataNote = new QLabel(this);
    for (auto* note : {m_modelNote, m_dataNote}) {
        note->setWordWrap(true); // a long summary or error wraps, never widens the panel
        note->setTextFormat(Qt::PlainText);
        note->setVisible(false);
    }
    m_probe = new DataProbe(this);
    auto* model = new QGroupBox(tr("Model and data"), this);
    auto* modelForm = wrappingForm(model);
    modelForm->addRow(optionLabel("model"), m_model);
    modelForm->addRow(QString(), m_modelNote);
    modelForm->addRow(optionLabel("data"), fieldRow(this, m_data, browse));
    modelForm->addRow(QString(), m_dataNote);
    modelForm->addRow(optionLabel("val_data"), m_validation);
    modelForm->addRow(optionLabel("label_column"), m_labelColumn);
    modelForm->addRow(optionLabel("image_size"), m_imageSize);
    modelForm->addRow(optionLabel("loss"), m_loss);
    return model;
}

// The optimisation: epochs, steps, batch, learning rate and its schedule, precision, seed.
QGroupBox* JobForm::buildTraining()
{
    m_epochs = optionSpin(this, "epochs");
    m_maxSteps = optionSpin(this, "max_steps");
    m_batch = optionSpin(this, "batch_size", 0); // 0 shows as the form's problem, not as 1
    m_globalBatch = new QLabel(this);
    m_globalBatch->setWordWrap(true); // a large batch must wrap, never widen the panel
    m_globalBatch->setToolTip(tr("Samples per optimizer step across all ranks"));
    m_lr = new QLineEdit(optionDefaultText("lr"), this);
    m_lr->setToolTip(optionTip("lr"));
    m_optimizer = optionCombo(this, "optimizer");
    m_momentum = optionDoubleSpin(this, "momentum", 3);
    m_weightDecay = optionDoubleSpin(this, "weight_decay", 5);
    m_schedule = optionCombo(this, "lr_schedule");
    m_precision = optionCombo(this, "precision");
    m_warmup = optionSpin(this, "warmup_steps");
    m_seed = optionSpin(this, "seed");
    auto* schedule = new QGroupBox(tr("Training"), this);
    auto* scheduleForm = wrappingForm(schedule);
    scheduleForm->addRow(optionLabel("epochs"), m_epochs);
    scheduleForm->addRow(optionLabel("max_steps"), m_maxSteps);
    scheduleForm->addRow(optionLabel("batch_size"), fieldRow(this, m_batch, m_globalBatch));
    scheduleForm->addRow(optionLabel("lr"), m_lr);
    scheduleForm->addRow(optionLabel("optimizer"), m_optimizer);
    scheduleForm->addRow(optionLabel("momentum"), m_momentum);
    scheduleForm->addRow(optionLabel("weight_decay"), m_weightDecay);
    scheduleForm->addRow(optionLabel("lr_schedule"), m_schedule);
    scheduleForm->addRow(optionLabel("warmup_steps"), m_warmup);
    scheduleForm->addRow(optionLabel("precision"), m_precision);
    scheduleForm->addRow(optionLabel("seed"), m_seed);
    return schedule;
}

// Evaluation, checkpoints, the output folder and the launch's supervision (restarts, hang, straggler).
QGroupBox* JobForm::buildOutputs()
{
    m_evalEvery = optionSpin(this, "eval_every");
    m_checkpointEvery = optionSpin(this, "checkpoint_every");
    m_keepCheckpoints = optionSpin(this, "keep_checkpoints");
    m_keepBest = optionCombo(this, "keep_best");
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
    m_heartbeat = doubleSpin(this, kHangDetectionOff, 86400, supervisor::kDefaultHeartbeatTimeoutSec, 1,
                             tr("A rank silent for this many seconds is reported hung and the group is stopped. A script's "
                                "output counts as progress; off (0) is the default for scripts"));
    m_heartbeat->setSuffix(tr(" s"));
    m_heartbeat->setSpecialValueText(tr("off"));
    m_stragglerAfter = doubleSpin(this, 0, supervisor::kMaxStragglerAfterSec, supervisor::kDefaultStragglerAfterSec, 0,
                                  tr("A rank that computes 1.2x slower than the others for this many seconds is named a straggler "
                                     "(in the log, the Ranks tab and a notification); off (0) names nobody"));
    m_stragglerAfter->setSuffix(tr(" s"));
    m_stragglerAfter->setSpecialValueText(tr("off"));
    auto* outputs = new QGroupBox(tr("Evaluation, checkpoints, output"), this);
    auto* outputForm = wrappingForm(outputs);
    outputForm->addRow(optionLabel("eval_every"), m_evalEvery);
    outputForm->addRow(optionLabel("checkpoint_every"), m_checkpointEvery);
    outputForm->addRow(optionLabel("keep_checkpoints"), m_keepCheckpoints);
    outputForm->addRow(optionLabel("keep_best"), m_keepBest);
    outputForm->addRow(tr("Output folder"), fieldRow(this, m_output, browseOut));
    outputForm->addRow(tr("Max restarts"), m_maxRestarts);
    outputForm->addRow(tr("Heartbeat timeout"), m_heartbeat);
    outputForm->addRow(tr("Straggler after"), m_stragglerAfter);
    m_outputForm = outputForm;
    return outputs;
}

void JobForm::layOut(QGroupBox* outputs)
{
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
    layout->addWidget(m_trainerModel);
    layout->addWidget(m_trainerSchedule);
    layout->addWidget(outputs);
    layout->addWidget(m_more);
    layout->addWidget(m_problemLabel);
    layout->addStretch(1);
}

// Every change revalidates the form; kind and place show their fields; the probe and the output check are debounced.
void JobForm::connectFields()
{
    for (auto* box : {m_epochs, m_maxSteps, m_batch, m_warmup, m_seed, m_evalEvery, m_checkpointEvery, m_keepCheckpoints, m_maxRestarts}) {
        connect(box, &QSpinBox::valueChanged, this, &JobForm::revalidate);
    }
    for (auto* box : {m_momentum, m_weightDecay, m_heartbeat}) connect(box, &QDoubleSpinBox::valueChanged, this, &JobForm::revalidate);
    for (auto* box : {m_data, m_loss, m_optimizer, m_schedule, m_precision, m_keepBest}) connect(box, &QComboBox::currentTextChanged, this, &JobForm::revalidate);
    for (auto* edit : {m_lr, m_labelColumn, m_imageSize}) connect(edit, &QLineEdit::textChanged, this, &JobForm::revalidate);
    connect(m_model, &ModelBox::modelChanged, this, &JobForm::revalidate);
    connect(m_more, &MoreTrainerOptions::changed, this, &JobForm::revalidate);
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
}

// Each field's trainer key (the launch's own settings have none), for setJob/job and for outlining a problem; then
// a field for each trainer option none of these shows (MoreTrainerOptions).
void JobForm::nameFields()
{
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
    QStringList shown;
    for (const Field& field : m_fields) {
        if (!field.trainerKey.isEmpty()) shown << field.trainerKey;
    }
    m_more = new MoreTrainerOptions(shown, this);
    for (const MoreTrainerOptions::Field& field : m_more->fields()) m_fields.append({field.key, field.widget});
}

} // namespace ringmaster::ui
