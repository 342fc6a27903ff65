#include "ui/runs/hyperparameter_table.h"

#include <QCheckBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace ringmaster::ui {

HyperparameterTable::HyperparameterTable(QWidget* parent)
    : QWidget(parent)
    , m_onlyDifferences(new QCheckBox(tr("Only differences"), this))
    , m_note(new QLabel(this))
    , m_table(new QTableWidget(this))
{
    m_onlyDifferences->setChecked(true);
    m_onlyDifferences->setToolTip(tr("Show only the settings that are not the same in every run (untick to see them all)"));
    connect(m_onlyDifferences, &QCheckBox::toggled, this, [this] { rebuild(); });
    m_note->setStyleSheet(QStringLiteral("color: #616161;"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::ContiguousSelection);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* top = new QHBoxLayout;
    top->addWidget(m_onlyDifferences);
    top->addSpacing(12);
    top->addWidget(m_note, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_table, 1);
    rebuild();
}

void HyperparameterTable::setRuns(const QStringList& labels, const QList<QColor>& colours, const QList<runs::RunJob>& jobs)
{
    m_labels = labels;
    m_colours = colours;
    m_jobs = jobs;
    rebuild();
}

void HyperparameterTable::setOnlyDifferences(bool on) { m_onlyDifferences->setChecked(on); }

bool HyperparameterTable::onlyDifferences() const { return m_onlyDifferences->isChecked(); }

QString HyperparameterTable::cellText(const QString& key, int column) const
{
    const int row = static_cast<int>(m_keys.indexOf(key));
    const QTableWidgetItem* item = row < 0 ? nullptr : m_table->item(row, column);
    return item ? item->text() : QString();
}

void HyperparameterTable::rebuild()
{
    m_keys = runs::jobKeys(m_jobs, onlyDifferences());
    const QStringList differing = onlyDifferences() ? m_keys : runs::jobKeys(m_jobs, true);
    const int columns = static_cast<int>(m_jobs.size());
    m_table->clear();
    m_table->setColumnCount(columns);
    m_table->setRowCount(static_cast<int>(m_keys.size()));
    m_table->setVerticalHeaderLabels(m_keys);
    for (int column = 0; column < columns; ++column) {
        auto* header = new QTableWidgetItem(m_labels.value(column, QFileInfo(m_jobs[column].run).fileName()));
        if (column < m_colours.size() && m_colours[column].isValid()) {
            header->setForeground(m_colours[column]);
            header->setData(Qt::DecorationRole, m_colours[column]);
        }
        header->setToolTip(m_jobs[column].run);
        m_table->setHorizontalHeaderItem(column, header);
    }
    for (int row = 0; row < m_keys.size(); ++row) {
        const QString& key = m_keys[row];
        const bool differs = differing.contains(key);
        for (int column = 0; column < columns; ++column) {
            const runs::RunJob& job = m_jobs[column];
            auto* item = new QTableWidgetItem;
            if (!job.values) {
                item->setText(kUnknown);
                item->setToolTip(job.problem);
            } else {
                const auto it = job.values->constFind(key);
                item->setText(it == job.values->constEnd() ? kUnknown : *it);
                if (it == job.values->constEnd()) item->setToolTip(tr("This run's job.json has no %1").arg(key));
            }
            if (differs && !onlyDifferences()) {   // among all rows, the differing ones stand out
                QFont bold = item->font();
                bold.setBold(true);
                item->setFont(bold);
            }
            m_table->setItem(row, column, item);
        }
    }
    if (m_jobs.isEmpty()) m_note->setText(tr("Compare runs to see their settings side by side."));
    else if (m_keys.isEmpty() && onlyDifferences()) m_note->setText(tr("No setting differs between these runs."));
    else m_note->setText(tr("%n setting(s)", nullptr, static_cast<int>(m_keys.size())));
}

} // namespace ringmaster::ui
