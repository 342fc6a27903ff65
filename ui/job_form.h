#pragma once
// The job form: model, data, schedule, optimizer, evaluation, checkpoints, output, restart policy.
// Every field has a tooltip; an invalid value is outlined and its reason listed under the form, and
// validityChanged() tells the window to keep Start disabled until the form is valid.

#include <QWidget>

#include "job_spec.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ringmaster::ui {

class JobForm : public QWidget
{
    Q_OBJECT

public:
    explicit JobForm(QWidget* parent = nullptr);

    // Fills the fields from a job (the GPU/CPU selection is the GPU panel's).
    void setJob(const supervisor::JobSpec& job);
    // The job the fields describe, with the given rank layout.
    supervisor::JobSpec job(const QString& device, int cpuRanks, const QList<int>& gpus) const;
    // The world size, for the global batch and the "no ranks" check.
    void setWorldSize(int ranks);

    bool isValid() const { return m_problems.isEmpty(); }
    QStringList problems() const { return m_problems; }

    // Widgets by role, for the tests and for focus handling.
    QSpinBox* batchSizeBox() const { return m_batch; }
    QLineEdit* outputEdit() const { return m_output; }
    QComboBox* modelBox() const { return m_model; }
    QSpinBox* maxStepsBox() const { return m_maxSteps; }
    QLabel* globalBatchLabel() const { return m_globalBatch; }

Q_SIGNALS:
    void validityChanged(bool valid, const QStringList& problems);

private:
    void revalidate();
    void mark(QWidget* widget, bool bad);

    QComboBox* m_model;
    QComboBox* m_data;
    QSpinBox* m_epochs;
    QSpinBox* m_maxSteps;
    QSpinBox* m_batch;
    QLabel* m_globalBatch;
    QLineEdit* m_lr;
    QComboBox* m_optimizer;
    QDoubleSpinBox* m_momentum;
    QDoubleSpinBox* m_weightDecay;
    QComboBox* m_schedule;
    QSpinBox* m_warmup;
    QSpinBox* m_seed;
    QSpinBox* m_evalEvery;
    QSpinBox* m_checkpointEvery;
    QSpinBox* m_keepCheckpoints;
    QLineEdit* m_output;
    QSpinBox* m_maxRestarts;
    QDoubleSpinBox* m_heartbeat;
    QLabel* m_problemLabel;
    QStringList m_problems;
    int m_worldSize = 2;
};

} // namespace ringmaster::ui
