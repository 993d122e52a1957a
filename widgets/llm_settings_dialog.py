"""Run ▸ LLM settings…: the endpoint, model and sampling of LLM methods, their price table, the
default budget and the response-cache mode.

The API key is never entered, shown or stored here: the dialog holds the *name* of the
environment variable that carries it, and a read-only line says where the key would come from
(``LLMSettings.key_source()``). **Test connection** lists the endpoint's models on a worker
thread (``app.controllers.Loader``), never on the GUI thread, and fills the model box.
Everything is saved with :func:`app.settings.save_llm_settings`.
"""

from __future__ import annotations

import math
import re
from urllib.parse import urlparse

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QStyledItemDelegate,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.llm import PRICES, LLMSettings

#: Cache modes in the order of the combo box, with what they mean.
CACHE_MODES = (
    ("record", "Record every reply (runs can be replayed)",
     "Ask the endpoint and keep every reply, so the run can be replayed offline"),
    ("replay", "Replay recorded replies only (offline)",
     "Answer only from recorded replies; never touch the network (a missing reply ends the run)"),
    ("off", "Off (ask the endpoint, keep nothing)", "Ask the endpoint and keep no reply"),
)
#: Longest time a Test connection waits (seconds), whatever the request time-out.
TEST_TIMEOUT = 20.0
#: Price table columns.
COL_PATTERN, COL_INPUT, COL_OUTPUT = range(3)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ERROR_COLOR = "#b00020"
_OK_COLOR = "#1a7f37"
_WARN_COLOR = "#9a6700"


def validate_base_url(url: str) -> str | None:
    """Why ``url`` cannot be an endpoint's base URL, or None when it can."""
    url = url.strip()
    if not url:
        return "Enter the endpoint's base URL, for example http://127.0.0.1:8000/v1 or https://api.openai.com/v1."
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https"):
        return f"The base URL must start with http:// or https:// (got {url!r})."
    if not parsed.netloc or not parsed.hostname:
        return f"The base URL has no host name: {url!r}."
    try:
        parsed.port  # noqa: B018 -- raises on a malformed port
    except ValueError:
        return f"The base URL has an invalid port: {url!r}."
    if any(c.isspace() for c in url):
        return "The base URL cannot contain spaces."
    return None


def _fmt_ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


class _PriceDelegate(QStyledItemDelegate):
    """Dollar figures are edited with a spin box (non-negative, four decimals)."""

    def createEditor(self, parent, option, index):
        if index.column() == COL_PATTERN:
            return super().createEditor(parent, option, index)
        editor = QDoubleSpinBox(parent)
        editor.setRange(0.0, 100_000.0)
        editor.setDecimals(4)
        editor.setSingleStep(0.05)
        editor.setPrefix("$ ")
        return editor

    def displayText(self, value, locale):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            text = f"{value:.4f}".rstrip("0")
            return "$ " + (text + "00" if text.endswith(".") else text if len(text.split(".")[1]) >= 2 else text + "0")
        return super().displayText(value, locale)


class LLMSettingsDialog(QDialog):
    """Edit and save the LLM settings. ``values()`` has the keys of
    :func:`app.settings.load_llm_settings` (``llm``, ``llm_cache``, ``llm_prices``,
    ``max_llm_calls``, ``max_llm_cost``)."""

    saved = Signal(dict)  # the values just saved

    def __init__(self, parent: QWidget | None = None, values: dict | None = None):
        super().__init__(parent)
        from app import settings
        from app.controllers import Loader  # the app's off-thread helper

        self.setWindowTitle("LLM settings")
        self.setObjectName("llmSettingsDialog")
        self.resize(940, 620)
        self.loader = Loader(self)
        self.loader.ready.connect(self._on_tested)
        self.loader.error.connect(self._on_test_failed)
        self._testing = False
        self.last_report = None  # the last ConnectionReport

        # ---- endpoint
        self.url_edit = QLineEdit()
        self.url_edit.setObjectName("llmBaseUrl")
        self.url_edit.setPlaceholderText("http://127.0.0.1:8000/v1")
        self.url_edit.setClearButtonEnabled(True)
        self.url_edit.setToolTip("Base URL of an OpenAI-compatible API (OpenAI, vLLM, Ollama, llama.cpp, …), "
                                 "usually ending in /v1")
        self.model_combo = QComboBox()
        self.model_combo.setObjectName("llmModel")
        self.model_combo.setEditable(True)
        self.model_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_combo.setToolTip("The model name sent with every request; Test connection lists the "
                                    "endpoint's models")
        self.test_button = QPushButton("Test connection")
        self.test_button.setObjectName("llmTestConnection")
        self.test_button.setToolTip("List the endpoint's models (one request, no completion, no cost)")
        self.connection_label = QLabel("Not tested.")
        self.connection_label.setObjectName("llmConnectionStatus")
        self.connection_label.setWordWrap(True)
        self.connection_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.connection_label.setStyleSheet("color: palette(placeholder-text);")
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.connection_label, 1)
        endpoint = QGroupBox("Endpoint")
        ef = QFormLayout(endpoint)
        ef.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        ef.addRow("Base URL", self.url_edit)
        ef.addRow("Model", self.model_combo)
        ef.addRow(test_row)

        # ---- API key: the variable's name only
        self.key_env_edit = QLineEdit()
        self.key_env_edit.setObjectName("llmKeyEnv")
        self.key_env_edit.setPlaceholderText("OPENAI_API_KEY")
        self.key_env_edit.setToolTip("Name of the environment variable holding the API key. The key itself is "
                                     "read when a request is made and is never stored by Kepler Lab. Leave "
                                     "empty for local servers that need no key.")
        self.key_source_edit = QLineEdit()
        self.key_source_edit.setObjectName("llmKeySource")
        self.key_source_edit.setReadOnly(True)
        self.key_source_edit.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.key_source_edit.setStyleSheet("QLineEdit { background: palette(window); color: palette(placeholder-text); }")
        self.key_source_edit.setToolTip("Where the key would come from now (the key is never shown)")
        key = QGroupBox("API key")
        kf = QFormLayout(key)
        kf.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        kf.addRow("Environment variable", self.key_env_edit)
        kf.addRow("Key source", self.key_source_edit)
        self._key_timer = QTimer(self)
        self._key_timer.setSingleShot(True)
        self._key_timer.setInterval(250)
        self._key_timer.timeout.connect(self._update_key_source)

        # ---- sampling and requests
        self.temperature = self._double(0.0, 2.0, 2, 0.05, "Sampling temperature (0: greedy)")
        self.top_p = self._double(0.0, 1.0, 2, 0.05, "Nucleus sampling: keep the most likely tokens up to this "
                                  "probability mass (1: all)")
        self.max_tokens = self._int(1, 1_000_000, "Longest reply, in tokens")
        self.max_tokens.setSingleStep(256)
        self.timeout = self._double(1.0, 3600.0, 1, 5.0, "Seconds one HTTP request may take before it is "
                                    "retried", suffix=" s")
        self.retries = self._int(0, 50, "Extra attempts after a failed one (429, 5xx, time-outs, malformed "
                                 "replies); other errors fail at once")
        self.concurrency = self._int(1, 256, "Requests in flight at once over the whole run")
        self.retry_base_delay = self._double(0.0, 600.0, 2, 0.5, "First back-off before a retry, doubled each "
                                             "retry (with jitter)", suffix=" s")
        self.retry_max_delay = self._double(0.0, 3600.0, 1, 5.0, "Longest back-off, and the cap on a "
                                            "server's Retry-After", suffix=" s")
        sampling = QGroupBox("Sampling")
        sf = QFormLayout(sampling)
        sf.addRow("Temperature", self.temperature)
        sf.addRow("Top p", self.top_p)
        sf.addRow("Max tokens per reply", self.max_tokens)
        requests = QGroupBox("Requests")
        rf = QFormLayout(requests)
        rf.addRow("Time-out", self.timeout)
        rf.addRow("Retries", self.retries)
        rf.addRow("Concurrent requests", self.concurrency)
        rf.addRow("First back-off", self.retry_base_delay)
        rf.addRow("Longest back-off", self.retry_max_delay)
        sampling_row = QHBoxLayout()
        sampling_row.addWidget(sampling)
        sampling_row.addWidget(requests)

        # ---- run defaults: budget and cache
        self.max_calls = self._int(0, 1_000_000, "LLM calls (successful completions) an LLM run starts with "
                                   "in its form; 'method default' keeps each method's paper protocol "
                                   "(LLM-SR 1000, direct prompting 5, ...)")
        self.max_calls.setSpecialValueText("method default")
        self.max_calls.setObjectName("llmMaxCalls")
        self.max_calls.setSingleStep(50)
        self.max_cost = self._double(0.0, 100_000.0, 2, 0.5, "Dollars a run may spend (by the price table); "
                                     "0 means no limit", prefix="$ ")
        self.max_cost.setSpecialValueText("no limit")
        self.cache_combo = QComboBox()
        self.cache_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.cache_combo.setMinimumContentsLength(24)
        self.cache_combo.setObjectName("llmCacheMode")
        for i, (mode, text, tip) in enumerate(CACHE_MODES):
            self.cache_combo.addItem(text, mode)
            self.cache_combo.setItemData(i, tip, Qt.ItemDataRole.ToolTipRole)
        self.cache_combo.setToolTip("Recorded replies live in Kepler Lab's cache folder; a replayed run "
                                    "gets the same replies in the same order, offline and at no cost")
        defaults = QGroupBox("Run defaults")
        df = QFormLayout(defaults)
        df.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        df.addRow("LLM calls per run", self.max_calls)
        df.addRow("Cost limit per run", self.max_cost)
        df.addRow("Response cache", self.cache_combo)
        self.judge_check = QCheckBox("Also ask the LLM judge after every run")
        self.judge_check.setObjectName("llmJudge")
        self.judge_check.setToolTip("The papers' symbolic accuracy: the final model and the ground truth, with "
                                    "constants replaced by placeholders, go to this endpoint's model, which "
                                    "answers yes or no with its reasoning (one extra call per run, for GP runs "
                                    "too). The offline check is always done.")
        df.addRow("", self.judge_check)

        # ---- prices
        self.price_table = QTableWidget(0, 3)
        self.price_table.setObjectName("llmPrices")
        self.price_table.setHorizontalHeaderLabels(["Model pattern", "Input $ / M tokens", "Output $ / M tokens"])
        self.price_table.verticalHeader().setVisible(False)
        self.price_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.price_table.setItemDelegate(_PriceDelegate(self.price_table))
        self.price_table.setAlternatingRowColors(True)
        self.price_table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.price_table.horizontalHeader()
        header.setSectionResizeMode(COL_PATTERN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_INPUT, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_OUTPUT, QHeaderView.ResizeMode.ResizeToContents)
        self.add_price_button = QPushButton("Add")
        self.add_price_button.setToolTip("Add a model pattern (a glob such as my-model-*)")
        self.remove_price_button = QPushButton("Remove")
        self.remove_price_button.setToolTip("Remove the selected rows")
        self.reset_prices_button = QPushButton("Reset to built-in")
        self.reset_prices_button.setToolTip("The list prices shipped with Kepler Lab (they may be out of date)")
        self.prices_note = QLabel("")
        self.prices_note.setStyleSheet("color: palette(placeholder-text);")
        self.prices_note.setWordWrap(True)
        buttons_row = QHBoxLayout()
        buttons_row.addWidget(self.add_price_button)
        buttons_row.addWidget(self.remove_price_button)
        buttons_row.addStretch(1)
        buttons_row.addWidget(self.reset_prices_button)
        prices = QGroupBox("Prices")
        pl = QVBoxLayout(prices)
        pl.addWidget(self.price_table, 1)
        pl.addLayout(buttons_row)
        pl.addWidget(self.prices_note)

        # ---- messages and buttons
        self.error_label = QLabel("")
        self.error_label.setObjectName("llmSettingsError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet(f"color: {_ERROR_COLOR};")
        self.error_label.setVisible(False)
        self.button_box = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        self.save_button = self.button_box.button(QDialogButtonBox.StandardButton.Save)
        self.defaults_button = self.button_box.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        self.defaults_button.setToolTip("Fill every field with Kepler Lab's defaults (saved only with Save)")

        left = QVBoxLayout()
        left.addWidget(endpoint)
        left.addWidget(key)
        left.addLayout(sampling_row)
        left.addWidget(defaults)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addWidget(prices, 1)
        columns = QHBoxLayout()
        columns.addLayout(left, 11)
        columns.addLayout(right, 10)
        layout = QVBoxLayout(self)
        layout.addLayout(columns, 1)
        layout.addWidget(self.error_label)
        layout.addWidget(self.button_box)

        self.test_button.clicked.connect(self.test_connection)
        self.key_env_edit.textChanged.connect(lambda _t: self._key_timer.start())
        self.add_price_button.clicked.connect(self.add_price_row)
        self.remove_price_button.clicked.connect(self.remove_price_rows)
        self.reset_prices_button.clicked.connect(lambda: self.set_prices(None))
        self.price_table.itemChanged.connect(lambda _i: self._update_prices_note())
        self.button_box.accepted.connect(self.accept)
        self.button_box.rejected.connect(self.reject)
        self.defaults_button.clicked.connect(lambda: self.set_values(settings.llm_defaults()))
        self.url_edit.textChanged.connect(lambda _t: self._show_error(""))
        self.url_edit.textChanged.connect(self._forget_test)
        self.key_env_edit.textChanged.connect(self._forget_test)

        self.set_values(values if values is not None else settings.load_llm_settings())

    # ------------------------------------------------------------------ construction helpers

    @staticmethod
    def _double(lo: float, hi: float, decimals: int, step: float, tip: str, suffix: str = "",
                prefix: str = "") -> QDoubleSpinBox:
        w = QDoubleSpinBox()
        w.setRange(lo, hi)
        w.setDecimals(decimals)
        w.setSingleStep(step)
        w.setSuffix(suffix)
        w.setPrefix(prefix)
        w.setToolTip(tip)
        w.setAccelerated(True)
        return w

    @staticmethod
    def _int(lo: int, hi: int, tip: str) -> QSpinBox:
        w = QSpinBox()
        w.setRange(lo, hi)
        w.setToolTip(tip)
        w.setAccelerated(True)
        w.setGroupSeparatorShown(True)
        return w

    # ------------------------------------------------------------------ values

    def set_values(self, values: dict) -> None:
        """Fill the form from a dict shaped like :func:`app.settings.load_llm_settings`."""
        llm = LLMSettings.from_dict(values.get("llm") or {})
        self.url_edit.setText(llm.base_url)
        self.model_combo.setCurrentText(llm.model)
        self.temperature.setValue(llm.temperature)
        self.top_p.setValue(llm.top_p)
        self.max_tokens.setValue(int(llm.max_tokens))
        self.timeout.setValue(llm.timeout)
        self.retries.setValue(int(llm.max_retries))
        self.concurrency.setValue(int(llm.concurrency))
        self.retry_base_delay.setValue(llm.retry_base_delay)
        self.retry_max_delay.setValue(llm.retry_max_delay)
        self.key_env_edit.setText(llm.api_key_env)
        self._update_key_source()
        self.max_calls.setValue(int(values.get("max_llm_calls") or 0))
        self.judge_check.setChecked(bool(values.get("llm_judge")))
        self.max_cost.setValue(float(values.get("max_llm_cost") or 0.0))
        mode = values.get("llm_cache") or "record"
        self.cache_combo.setCurrentIndex(max(0, self.cache_combo.findData(mode)))
        self.set_prices(values.get("llm_prices"))
        self._show_error("")

    def settings(self) -> LLMSettings:
        """The form's LLMSettings (raises ValueError when a field is invalid)."""
        return LLMSettings(
            base_url=self.url_edit.text().strip(),
            model=self.model_combo.currentText().strip(),
            temperature=round(self.temperature.value(), 4),
            top_p=round(self.top_p.value(), 4),
            max_tokens=self.max_tokens.value(),
            timeout=self.timeout.value(),
            max_retries=self.retries.value(),
            concurrency=self.concurrency.value(),
            api_key_env=self.key_env_edit.text().strip(),
            retry_base_delay=self.retry_base_delay.value(),
            retry_max_delay=self.retry_max_delay.value(),
        )

    def values(self) -> dict:
        """Everything the form holds, shaped like :func:`app.settings.load_llm_settings`."""
        cost = self.max_cost.value()
        return {
            "llm": self.settings().to_dict(),
            "llm_cache": self.cache_combo.currentData(),
            "llm_prices": self.prices(),
            "max_llm_calls": self.max_calls.value() or None,
            "max_llm_cost": cost if cost > 0 else None,
            "llm_judge": self.judge_check.isChecked(),
        }

    def validate(self) -> str | None:
        """What is wrong with the form, in words, or None."""
        problem = validate_base_url(self.url_edit.text())
        if problem:
            return problem
        if not self.model_combo.currentText().strip():
            return "Enter a model name, or press Test connection to list the endpoint's models."
        env = self.key_env_edit.text().strip()
        if env and not _ENV_NAME.match(env):
            return (f"{env!r} is not an environment variable name (letters, digits and _ only). Enter the "
                    "variable's name, not the key itself.")
        if self.retry_max_delay.value() < self.retry_base_delay.value():
            return "The longest back-off cannot be shorter than the first one."
        return self._price_problem()

    # ------------------------------------------------------------------ prices

    def set_prices(self, prices: dict | None) -> None:
        """Show ``prices`` ({pattern: [input, output]}), or the built-in table for None."""
        table = PRICES if prices is None else prices
        self.price_table.blockSignals(True)
        self.price_table.setRowCount(0)
        for pattern, (inp, out) in table.items():
            self._append_price(pattern, float(inp), float(out))
        self.price_table.blockSignals(False)
        self._update_prices_note()

    def _append_price(self, pattern: str, inp: float, out: float) -> int:
        row = self.price_table.rowCount()
        self.price_table.insertRow(row)
        self.price_table.setItem(row, COL_PATTERN, QTableWidgetItem(pattern))
        for col, value in ((COL_INPUT, inp), (COL_OUTPUT, out)):
            item = QTableWidgetItem()
            item.setData(Qt.ItemDataRole.EditRole, float(value))
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.price_table.setItem(row, col, item)
        return row

    def add_price_row(self) -> None:
        row = self._append_price("", 0.0, 0.0)
        self.price_table.setCurrentCell(row, COL_PATTERN)
        self.price_table.editItem(self.price_table.item(row, COL_PATTERN))
        self._update_prices_note()

    def remove_price_rows(self) -> None:
        rows = sorted({i.row() for i in self.price_table.selectedIndexes()}, reverse=True)
        if not rows and self.price_table.currentRow() >= 0:
            rows = [self.price_table.currentRow()]
        for r in rows:
            self.price_table.removeRow(r)
        self._update_prices_note()

    def _price_rows(self) -> list[tuple[int, str, object, object]]:
        rows = []
        for r in range(self.price_table.rowCount()):
            cells = [self.price_table.item(r, c) for c in range(3)]
            pattern = cells[0].text().strip() if cells[0] else ""
            values = [c.data(Qt.ItemDataRole.EditRole) if c else None for c in cells[1:]]
            rows.append((r, pattern, values[0], values[1]))
        return rows

    def _price_problem(self) -> str | None:
        seen: set[str] = set()
        for r, pattern, inp, out in self._price_rows():
            if not pattern:
                return f"Price row {r + 1}: enter a model pattern (for example my-model-*), or remove the row."
            if pattern.lower() in seen:
                return f"Price row {r + 1}: the pattern {pattern!r} is listed twice."
            seen.add(pattern.lower())
            for name, value in (("input", inp), ("output", out)):
                try:
                    number = float(value)
                except (TypeError, ValueError):
                    return f"Price row {r + 1} ({pattern}): the {name} price {value!r} is not a number."
                if not math.isfinite(number) or number < 0:
                    return f"Price row {r + 1} ({pattern}): the {name} price must be zero or more."
        return None

    def prices(self) -> dict | None:
        """The table as {pattern: [input, output]}, or None when it is the built-in table (so the
        built-in figures keep applying when a new version updates them)."""
        table = {}
        for _r, pattern, inp, out in self._price_rows():
            try:
                table[pattern] = [float(inp), float(out)]
            except (TypeError, ValueError):
                table[pattern] = [inp, out]
        builtin = {k: [float(v[0]), float(v[1])] for k, v in PRICES.items()}
        return None if table == builtin else table

    def _update_prices_note(self) -> None:
        source = "Built-in list prices" if self.prices() is None else "Your own prices"
        self.prices_note.setText(
            f"{source}, US$ per million tokens. Patterns are globs on the model name; the longest match wins. "
            "A model matching no pattern costs $0 and is reported as unpriced."
        )

    # ------------------------------------------------------------------ key source

    def _update_key_source(self) -> None:
        env = self.key_env_edit.text().strip()
        if env and not _ENV_NAME.match(env):
            self.key_source_edit.setText("not a variable name — enter the variable's name, not the key")
            return
        source = LLMSettings(api_key_env=env).key_source()
        if source == "none":
            text = f"none — {env} is not set" if env else "none — no variable named"
            tip = (text + ". Requests go without a key: fine for local servers (vLLM, Ollama, llama.cpp); "
                   "hosted APIs need the variable set before Kepler Lab starts.")
        else:
            text = f"{source} (set)"
            tip = f"The key is read from the {source} at each request; it is never shown or stored."
        self.key_source_edit.setText(text)
        self.key_source_edit.setCursorPosition(0)
        self.key_source_edit.setToolTip(tip)

    # ------------------------------------------------------------------ test connection

    def busy(self) -> bool:
        return self.loader.busy()

    def test_connection(self) -> bool:
        """List the endpoint's models on a worker thread; False when the form is invalid."""
        problem = validate_base_url(self.url_edit.text())
        if problem:
            self._show_error(problem)
            self._set_connection(problem, _ERROR_COLOR)
            return False
        try:
            form = self.settings()
        except ValueError as exc:
            self._show_error(str(exc))
            return False
        self._show_error("")
        test = LLMSettings.from_dict({**form.to_dict(), "timeout": min(form.timeout, TEST_TIMEOUT),
                                      "max_retries": 0})

        def work(test=test):
            from engine.llm import LLMClient

            client = LLMClient(test)
            try:
                return client.test_connection()
            finally:
                client.close()

        self._testing = True
        self.test_button.setEnabled(False)
        self._set_connection(f"Connecting to {test.base_url} …", "#555")
        self.loader.request("test", work)
        return True

    def _forget_test(self, *_args) -> None:
        """A changed endpoint or key makes the last test's answer stale."""
        if not self._testing:
            self._set_connection("Not tested.", "#555")

    def _on_tested(self, _channel: str, report) -> None:
        self._testing = False
        self.test_button.setEnabled(True)
        self.last_report = report
        if not report.ok:
            self._set_connection(f"Failed after {_fmt_ms(report.latency)}: {report.error}", _ERROR_COLOR)
            return
        count = len(report.models)
        text = f"Connected in {_fmt_ms(report.latency)} — {count} model{'s' if count != 1 else ''}"
        color = _OK_COLOR
        if report.models:
            current = self.model_combo.currentText().strip()
            self.model_combo.blockSignals(True)
            self.model_combo.clear()
            self.model_combo.addItems(report.models)
            self.model_combo.blockSignals(False)
            if current and current in report.models:
                self.model_combo.setCurrentText(current)
            elif current:
                self.model_combo.setCurrentText(current)
                text += f". {current!r} is not among them: pick one from the list"
                color = _WARN_COLOR
            else:
                self.model_combo.setCurrentIndex(0)
        else:
            text += " (the endpoint lists none; type the model name)"
        self._set_connection(text, color)

    def _on_test_failed(self, _channel: str, message: str) -> None:
        self._testing = False
        self.test_button.setEnabled(True)
        self._set_connection(f"Failed: {message}", _ERROR_COLOR)

    def _set_connection(self, text: str, color: str) -> None:
        self.connection_label.setText(text)
        self.connection_label.setToolTip(text)
        self.connection_label.setStyleSheet(f"color: {color};")

    # ------------------------------------------------------------------ saving

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))

    def error_text(self) -> str:
        """The validation message shown under the form ("" when there is none)."""
        return self.error_label.text()

    def accept(self) -> None:
        problem = self.validate()
        if problem is None:
            try:
                values = self.values()
            except ValueError as exc:
                problem = str(exc)
        if problem:
            self._show_error(problem)
            return
        from app import settings

        settings.save_llm_settings(values)
        self._show_error("")
        self.saved.emit(values)
        super().accept()
