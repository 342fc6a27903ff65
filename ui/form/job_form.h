#pragma once
// The job form: what runs (the built-in trainer, or the user's own script: ScriptFields) and where (this
// machine, or a Slurm cluster: SlurmFields, under which this machine's GPU selection and the local-only
// settings, restarts and hang detection, do not apply), then for the trainer model, data, schedule,
// optimizer, evaluation and checkpoints, and for both output and restart policy.
// Every field has a tooltip; an invalid value is outlined and its reason listed under the form, and
// validityChanged() tells the window to keep Start disabled until the form is valid.
// The form edits a job rather than replacing it: the loaded JobSpec is the base, and only the fields
// the user changed are written back, so keys the form does not show (resume, grace_period, unknown
// trainer flags) and numbers it would round survive load -> save unchanged; a field left unset (no
// validation data, no label column, loss auto) is not written. The output-folder check touches the
// disk, so it runs debounced on a worker thread; the form counts as invalid meanwhile.
// The model and data fields are also checked by the trainer itself: a debounced DataProbe
// (ringmaster-trainer --probe) describes them under their rows, its count of training samples is the
// one the batch is checked against, and a rejection is listed as a problem. The probe does not hold
// Start back while it runs (Start's pre-flight checks the same); only an answer that rejects does.
// Its fields and connections are made in job_form_parts.cpp; what it does with a job is in job_form.cpp.

#include <QFutureWatcher>
#include <QJsonValue>
#include <QList>
#include <QTimer>
#include <QWidget>

#include "ui/form/data_probe.h"
#include "supervisor/job_spec.h"
#include "ui/form/training_set_size.h"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ringmaster::ui {

class ModelBox;
class MoreTrainerOptions;
class ScriptFields;
class SlurmFields;
class ValidationField;

class JobForm : public QWidget
{
    Q_OBJECT

public:
    explicit JobForm(QWidget* parent = nullptr);

    // Where a job came from: the user's own (the defaults, the last job) or a file that may be someone else's
    // (Load job…, a *.ringmaster.json opened from the file manager, a run folder's job.json). Nothing a file
    // names runs or is read before Start: the probe always runs the trainer the app found itself (never the
    // file's trainer_path), and skips a TorchScript model or a tensor file the file named (both are code to
    // LibTorch) until the user picks another; a script's interpreter given as a path waits for Start too.
    enum class JobSource { Own, File };
    // Fills the fields from a job (the GPU/CPU selection is the GPU panel's).
    void setJob(const supervisor::JobSpec& job, JobSource source = JobSource::Own);
    // The model or data file a job file named that is not read before Start while the field still shows it
    // (empty: none; the probe runs).
    QString heldInput() const;
    // The user's own choice of trainer ("Choose trainer…"): the job runs it, as --trainer does.
    void setTrainerPath(const QString& path) { m_base.trainerPath = path; m_base.trainerPathFromFile = false; }
    // The job the fields describe, with the given rank layout (ignored under Slurm: SlurmFields::apply).
    supervisor::JobSpec job(const QString& device, int cpuRanks, const QList<int>& gpus) const;
    // The world size of this machine's ranks, for the global batch and the "no ranks" check.
    void setWorldSize(int ranks);
    // The job's ranks: the GPU panel's, or under Slurm nodes x tasks per node.
    int worldSize() const;

    // Valid: no problem listed and no output-folder check pending for the current text.
    bool isValid() const { return m_problems.isEmpty() && !isChecking(); }
    // The output folder's or the script interpreter's check is pending.
    bool isChecking() const;
    bool isScript() const;
    // "Where" is "Slurm cluster".
    bool isSlurm() const;
    // A probe is waiting for its debounce or running ("checking…" under the rows).
    bool isProbing() const { return m_probePending; }
    ProbeOutcome probeOutcome() const { return m_probeOutcome; }
    QStringList problems() const { return m_problems; }

    // Widgets by role, for the tests and for focus handling.
    QComboBox* kindBox() const { return m_kind; }
    QComboBox* whereBox() const { return m_where; }
    SlurmFields* slurmFields() const { return m_slurm; }
    ScriptFields* scriptFields() const { return m_script; }
    QDoubleSpinBox* heartbeatBox() const { return m_heartbeat; }
    QDoubleSpinBox* stragglerAfterBox() const { return m_stragglerAfter; }
    QSpinBox* batchSizeBox() const { return m_batch; }
    QComboBox* precisionBox() const { return m_precision; }
    QLineEdit* outputEdit() const { return m_output; }
    ModelBox* modelBox() const { return m_model; }
    QComboBox* dataBox() const { return m_data; }
    ValidationField* validationField() const { return m_validation; }
    QLineEdit* labelColumnEdit() const { return m_labelColumn; }
    QLineEdit* imageSizeEdit() const { return m_imageSize; }
    QComboBox* lossBox() const { return m_loss; }
    QLabel* modelNote() const { return m_modelNote; }
    QLabel* dataNote() const { return m_dataNote; }
    DataProbe* dataProbe() const { return m_probe; }
    QSpinBox* maxStepsBox() const { return m_maxSteps; }
    QLabel* globalBatchLabel() const { return m_globalBatch; }
    QLabel* problemLabel() const { return m_problemLabel; }
    // The field of the trainer option KEY ("batch_size"), or nullptr; the box of the options without a field above.
    QWidget* fieldOfTrainerOption(const QString& key) const;
    MoreTrainerOptions* moreTrainerOptions() const { return m_more; }

Q_SIGNALS:
    // Also when an output-folder check starts or ends (isChecking()).
    void validityChanged(bool valid, const QStringList& problems);
    // "Where" changed: under Slurm this machine's GPU selection does not decide the job's GPUs.
    void placeChanged(bool slurm);

private:
    // The heartbeat box's 0: a script's hang detection is off (it prints nothing regularly by contract).
    static constexpr double kHangDetectionOff = 0.0;

    // The constructor's named parts (job_form_parts.cpp), in the order it calls them.
    void createKindAndPlace();
    QGroupBox* buildModelAndData();
    QGroupBox* buildTraining();
    QGroupBox* buildOutputs();
    void nameFields();
    void layOut(QGroupBox* outputs);
    void connectFields();

    // A field the form shows: a trainer flag (by name) or a launch setting.
    struct Field
    {
        QString trainerKey; // empty for the launch settings below
        QWidget* widget;
    };

    void revalidate();
    void finishValidation(const QStringList& problems);
    void showKind();
    void showWhere();
    QList<QJsonValue> shownValues() const;
    QJsonValue valueOf(const QWidget* widget) const;
    void scheduleOutputCheck();
    void checkOutputNow();
    void onOutputChecked();
    QString datasetProblem(const QString& data, bool* dataAtFault);
    QStringList probeArguments() const;
    void requestProbe(bool inputsChecked);
    void onProbed(const ProbeOutcome& outcome);
    void showProbe();

    QComboBox* m_kind;
    QComboBox* m_where;
    SlurmFields* m_slurm;
    ScriptFields* m_script;
    QWidget* m_trainerModel;             // the trainer's groups, hidden for a script
    QWidget* m_trainerSchedule;
    QFormLayout* m_outputForm;
    ModelBox* m_model;
    QComboBox* m_data;
    ValidationField* m_validation;
    QLineEdit* m_labelColumn;
    QLineEdit* m_imageSize;
    QComboBox* m_loss;
    QLabel* m_modelNote;
    QLabel* m_dataNote;
    QSpinBox* m_epochs;
    QSpinBox* m_maxSteps;
    QSpinBox* m_batch;
    QLabel* m_globalBatch;
    QLineEdit* m_lr;
    QComboBox* m_optimizer;
    QDoubleSpinBox* m_momentum;
    QDoubleSpinBox* m_weightDecay;
    QComboBox* m_schedule;
    QComboBox* m_precision;
    QComboBox* m_keepBest;
    MoreTrainerOptions* m_more;          // every other trainer option, from the option table
    QSpinBox* m_warmup;
    QSpinBox* m_seed;
    QSpinBox* m_evalEvery;
    QSpinBox* m_checkpointEvery;
    QSpinBox* m_keepCheckpoints;
    QLineEdit* m_output;
    QSpinBox* m_maxRestarts;
    QDoubleSpinBox* m_heartbeat;
    QDoubleSpinBox* m_stragglerAfter;
    QLabel* m_problemLabel;
    QStringList m_problems;
    bool m_lastValid = false;
    bool m_lastPending = false;
    int m_worldSize = 2;

    QList<Field> m_fields;
    supervisor::JobSpec m_base;          // the loaded job: what the form does not show comes from here
    QList<QJsonValue> m_loadedValues;    // the fields as setJob() filled them, to tell user edits apart

    QTimer m_outputDebounce;
    QFutureWatcher<QString> m_outputWatcher;
    QString m_outputInFlight;            // the text the running check is for
    QString m_outputChecked;             // the text m_outputProblem belongs to
    QString m_outputProblem;
    bool m_outputPending = false;

    QString m_sizeFor;                   // the dataset (and synthetic count) m_size was read for
    TrainingSetSize m_size;

    DataProbe* m_probe;
    QTimer m_probeDebounce;
    QStringList m_probeKey;              // trainer and arguments of the probe pending or answered; empty: none
    QStringList m_heldInputs;            // a job file's model and tensor-file paths, not read before Start
    ProbeOutcome m_probeOutcome;         // its answer (Kind::None until it comes)
    bool m_probePending = false;
};

} // namespace ringmaster::ui
