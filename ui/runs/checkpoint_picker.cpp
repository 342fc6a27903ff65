#include "ui/runs/checkpoint_picker.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace ringmaster::ui {
namespace {

QTableWidgetItem* cell(const QString& text, Qt::Alignment alignment = Qt::AlignRight | Qt::AlignVCenter)
{
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(alignment);
    return item;
}

} // namespace

CheckpointPicker::CheckpointPicker(const QString& runDir, Purpose purpose, QWidget* parent)
    : QDialog(parent)
    , m_checkpoints(runs::listRunCheckpoints(runDir))
    , m_table(new QTableWidget(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    const bool resume = purpose == Purpose::Resume;
    setWindowTitle(resume ? tr("Resume from a checkpoint") : tr("Copy a checkpoint"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(resume ? tr("Continue <b>%1</b> in its own run directory from the checkpoint picked below. "
                                         "Resuming from an older one sets the later checkpoints aside "
                                         "(checkpoints/abandoned-…) and cuts metrics.csv back to its step.")
                                          .arg(QFileInfo(runDir).fileName().toHtmlEscaped())
                                    : tr("Pick the checkpoint of <b>%1</b> to copy.").arg(QFileInfo(runDir).fileName().toHtmlEscaped()),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    m_table->setColumnCount(4);
    m_table->setHorizontalHeaderLabels({tr("Step"), tr("Epoch"), tr("Saved"), tr("Loss at that step")});
    m_table->setRowCount(static_cast<int>(m_checkpoints.size()));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    for (int row = 0; row < m_checkpoints.size(); ++row) {
        const auto& info = m_checkpoints.at(row);
        m_table->setItem(row, 0, cell(QString::number(info.step)));
        m_table->setItem(row, 1, cell(info.epoch ? QString::number(*info.epoch) : QStringLiteral("—")));
        m_table->setItem(row, 2, cell(QLocale().toString(info.fileTime, QLocale::ShortFormat), Qt::AlignLeft | Qt::AlignVCenter));
        QString loss = info.loss ? QString::number(*info.loss, 'g', 6) : QStringLiteral("—");
        if (info.loss && info.metricsStep && *info.metricsStep != info.step) loss += tr(" (step %1)").arg(*info.metricsStep);
        m_table->setItem(row, 3, cell(loss));
        m_table->item(row, 0)->setToolTip(info.path);
        if (info.best) {
            // The run's --keep-best checkpoint (checkpoints/best.json): marked, and kept by the rotation.
            m_table->item(row, 0)->setText(tr("%1  ★ best").arg(info.step));
            m_table->item(row, 0)->setToolTip(tr("The best checkpoint by %1 (%2), kept whatever the rotation: %3")
                                                  .arg(info.bestMetric, QString::number(info.bestValue, 'g', 6), info.path));
            QFont bold = m_table->item(row, 0)->font();
            bold.setBold(true);
            m_table->item(row, 0)->setFont(bold);
        }
    }
    m_table->resizeColumnsToContents();
    layout->addWidget(m_table);
    m_buttons->button(QDialogButtonBox::Ok)->setText(resume ? tr("Resume") : tr("Copy…"));
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_table, &QTableWidget::itemSelectionChanged, this,
            [this] { m_buttons->button(QDialogButtonBox::Ok)->setEnabled(!selectedCheckpoint().isEmpty()); });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, &QDialog::accept);
    if (!m_checkpoints.isEmpty()) m_table->selectRow(static_cast<int>(m_checkpoints.size()) - 1);   // the newest
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(!selectedCheckpoint().isEmpty());
    resize(560, 360);
}

QString CheckpointPicker::selectedCheckpoint() const
{
    const auto rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty()) return {};
    return m_checkpoints.value(rows.first().row()).path;
}

bool CheckpointPicker::selectStep(qint64 step)
{
    for (int row = 0; row < m_checkpoints.size(); ++row) {
        if (m_checkpoints.at(row).step == step) {
            m_table->selectRow(row);
            return true;
        }
    }
    return false;
}

QString CheckpointPicker::pick(QWidget* parent, const QString& runDir, Purpose purpose)
{
    CheckpointPicker picker(runDir, purpose, parent);
    if (picker.checkpoints().isEmpty()) {
        QMessageBox::information(parent, picker.windowTitle(),
                                 tr("%1 has no checkpoints (checkpoints/step-*.pt): nothing to %2.")
                                     .arg(runDir, purpose == Purpose::Resume ? tr("resume from") : tr("copy")));
        return {};
    }
    return picker.exec() == QDialog::Accepted ? picker.selectedCheckpoint() : QString();
}

} // namespace ringmaster::ui
