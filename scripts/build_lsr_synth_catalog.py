#!/usr/bin/env python
"""Build Kepler Lab's LSR-Synth catalog (``assets/catalogs/lsr_synth.json``).

LLM-SRBench (Shojaee et al., ICML 2025) lists the 129 LSR-Synth laws in its Table 4 but
publishes neither their constants nor their initial conditions, and the text rendering of the
table we work from has damaged a few rows. This one-off script fixes both once and for all:

1. every law is written in Kepler Lab's expression syntax with named constants, with the damaged
   rows repaired (see ``REPAIRS``) and the absolute-value bars the rendering dropped restored;
2. for each law, constants and initial conditions are drawn from the documented ranges below
   with a random generator seeded from the law's name (``zlib.crc32``), rounded to 4
   significant digits, and the data are generated with exactly the code the app uses
   (:func:`engine.tasks.lsr_synth.simulate`);
3. a draw is kept only if it passes the quality criteria of App. A.2 turned into numbers
   (``THRESHOLDS``): the solver succeeds and agrees with a tighter-tolerance solve, nothing is
   non-finite, the state stays in its valid domain and bounded, the trajectory is not flat and
   its out-of-domain window still moves, and every additive term of the law visibly contributes
   to the target. Otherwise the next draw from the same stream is tried; the number of draws is
   recorded as ``attempts``.

The app reads only the JSON. Rebuilding is deterministic: ``python scripts/build_lsr_synth_catalog.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.expr import compile_numpy, parse  # noqa: E402
from engine.tasks import lsr_synth as ls  # noqa: E402

CATALOG_FORMAT = 1
SIGNIFICANT_DIGITS = 4

# ----------------------------------------------------------------------------- sampling ranges
# (low, high, unit, meaning). A range is sampled log-uniformly when high/low >= 10 (both
# positive) and uniformly otherwise. A symbol's role decides its range; see ``ROLES``.

RANGES: dict[str, dict[str, tuple[float, float, str, str]]] = {
    "chemistry": {
        "k": (0.01, 0.3, "(mol/L)^(1-n) per time unit", "rate constant of the known decay terms (order n = 1/2, 1 or 2)"),
        "k_s": (0.01, 0.3, "per time unit", "decay rate of a time-dependent rate coefficient, exp(-k_s t)"),
        "k_z": (0.01, 0.3, "L/mol per time unit", "amplitude of the saturating high-order term"),
        "k_w": (0.01, 0.3, "mol/L per time unit", "amplitude of the cos(log(A+1)) term"),
        "k_t": (0.01, 0.3, "mol/L per time unit", "amplitude of the sin(log(A+1)) term"),
        "k_m": (0.01, 0.3, "mol/L per time unit", "amplitude of the sin(sqrt(A)) term"),
        "k_p": (0.01, 0.3, "mol/L per time unit", "amplitude of the sin(omega A) term"),
        "k_f": (0.01, 0.3, "(mol/L)^(2/3) per time unit", "amplitude of the fractional-order A^(1/3) term"),
        "k_q": (0.01, 0.3, "per time unit", "amplitude of the log(gamma t + 1) growth term"),
        "beta": (0.1, 5.0, "(L/mol)^4", "saturation constant of the high-order term"),
        "gamma": (0.01, 0.5, "per time unit", "time scale inside log(gamma t + 1)"),
        "omega": (0.5, 5.0, "L/mol", "concentration frequency inside sin(omega A)"),
    },
    "biology": {
        "r": (0.02, 0.5, "per time unit", "intrinsic growth rate"),
        "K0": (20.0, 200.0, "10^3 individuals", "carrying capacity"),
        "alpha_allee": (1.0, 10.0, "10^3 individuals", "Allee threshold in (-1 + P/alpha); where the same alpha also sets a switch steepness it is used there in 1/(10^3 individuals)"),
        "alpha_allee_exp": (1.0, 3.0, "10^3 individuals / dimensionless", "alpha shared by the Allee threshold and the time exponent t^alpha (BPG22)"),
        "alpha_sat": (1.0, 10.0, "1/(10^3 individuals)", "saturation constant in P^2/(alpha P + 1)"),
        "alpha_steep": (0.1, 2.0, "1/(10^3 individuals)", "steepness of the sigmoidal switch 1/(1 + exp(-alpha (P - beta)))"),
        "alpha_exp": (0.5, 2.0, "dimensionless", "exponent of the decaying time factor 1/t^alpha"),
        "alpha_catch": (0.05, 0.5, "per unit effort", "catchability of the harvesting term Q alpha P"),
        "Q": (0.1, 1.0, "effort per time unit", "harvesting effort"),
        "beta_season": (0.05, 0.5, "per time unit", "amplitude of the periodic growth modulation beta P sin(omega t)"),
        "beta_switch": (5.0, 50.0, "10^3 individuals", "population at which the sigmoidal switch turns on"),
        "gamma_t": (0.02, 0.3, "per time unit", "decay rate of exp(-gamma t)"),
        "gamma_P": (0.01, 0.5, "1/(10^3 individuals)", "density scale of 1 - exp(-gamma P)"),
        "gamma_tP": (0.02, 0.3, "per time unit and 1/(10^3 individuals)", "gamma shared by exp(-gamma t) and exp(-gamma P) (BPG15, BPG23)"),
        "omega": (0.2, 1.5, "rad per time unit", "angular frequency of the periodic modulation"),
    },
    "physics": {
        "F0": (0.1, 1.0, "m per time unit^2", "amplitude of the driving force F0 sin(t) (per unit mass)"),
        "beta": (0.005, 0.3, "per time unit in 2 beta v; the sin, log and |v|^(1/3) terms give it the units that make them accelerations", "damping coefficient"),
        "alpha": (0.01, 1.0, "time unit / m^2", "cubic velocity damping coefficient"),
        "mu": (0.01, 0.5, "per time unit", "coefficient of the van der Pol / Rayleigh-type damping"),
        "omega0": (0.3, 1.5, "rad per time unit", "natural angular frequency"),
        "gamma_t": (0.005, 0.05, "per time unit", "rate of the stiffness drift (gamma t + 1)"),
        "gamma_v": (0.1, 1.0, "(time unit/m)^(1/3)", "strength of the velocity-dependent stiffness (gamma |v|^(1/3) + 1)"),
    },
    "material_science": {
        "E0": (20.0, 200.0, "MPa", "elastic modulus at the reference temperature"),
        "alpha_T": (0.0005, 0.0025, "1/K", "thermal softening coefficient of the modulus"),
        "beta": (0.01, 0.3, "MPa/K", "thermal stress coefficient"),
        "eta_lin": (0.01, 0.2, "MPa/K", "eta when it multiplies (T - T0) once"),
        "eta_sq": (0.0001, 0.001, "MPa/K^2", "eta when it multiplies (T - T0)^2"),
        "eta_sin": (1.0, 20.0, "MPa", "eta when it multiplies sin(T - T0)"),
        "eta_peak": (5.0, 50.0, "MPa", "eta when it multiplies exp(-(T - T0)^2)"),
        "M": (0.2, 0.8, "dimensionless", "exponent of the strain power epsilon^M"),
        "H": (50.0, 500.0, "MPa", "cubic hardening modulus"),
        "K": (100.0, 5000.0, "MPa", "prefactor of the thermally activated hardening term"),
        "N": (0.1, 0.6, "dimensionless", "strain-hardening exponent"),
        "Q": (5000.0, 30000.0, "J/mol", "activation energy"),
        "T0": (273.0, 333.0, "K", "reference temperature"),
    },
}

#: Physical constants that are not sampled.
FIXED = {"R": (8.314, "J/(mol K)", "molar gas constant")}

INITIAL_CONDITIONS: dict[str, dict[str, tuple[float, float, str]]] = {
    "chemistry": {"A0": (0.1, 2.0, "mol/L")},
    "biology": {"P0": (1.0, 50.0, "10^3 individuals")},
    "physics": {"x0": (-1.5, 1.5, "m"), "v0": (-1.0, 1.0, "m per time unit")},
    "material_science": {},
}

THRESHOLDS = {
    "max_attempts": 2000,
    "tolerance_check": {"rtol": 1e-10, "atol": 1e-12},
    "max_tolerance_discrepancy": 1e-5,
    "state_bounds": {"chemistry": 25.0, "biology": 1000.0, "physics": 20.0, "material_science": 1000.0},
    "positivity_floor": {"chemistry": 1e-6, "biology": 1e-6},
    "min_state_change": 0.05,
    "min_ood_std_ratio": 0.01,
    "min_term_share": 0.01,
}

THRESHOLD_NOTES = {
    "max_attempts": "draws tried per law before the build fails (then the ranges must be revisited)",
    "tolerance_check": "the trajectory is integrated a second time with these tighter tolerances",
    "max_tolerance_discrepancy": "largest |difference| between the two solves over the largest |state|; rejects ill-conditioned (e.g. chaotic) trajectories that a solver tolerance cannot pin down",
    "state_bounds": "largest allowed |state| (mol/L, 10^3 individuals, m or m per time unit) or |stress| (MPa) anywhere in the data: the no-divergence criterion",
    "positivity_floor": "smallest allowed concentration or population: the state must stay in the domain where sqrt, fractional powers and logs of it are real",
    "min_state_change": "smallest allowed (max - min) / max |state| of every state component over the window: the no-constant-solution criterion",
    "min_ood_std_ratio": "smallest allowed std of the target on the out-of-domain rows over its std on all rows: the out-of-domain window must not have settled to a constant",
    "min_term_share": "smallest allowed RMS of each additive term of the law over the RMS of the target: every term must leave a visible trace in the data",
}

# ----------------------------------------------------------------------------- Table 4 as printed
# The rows as our text rendering of the paper prints them (OCR damage included).

PAPER_ROWS = {
    'CKR1': r'-kA(t)^{2} + k_{z}A(t)^{2}/(\beta A(t)^{4} + 1)',
    'CKR2': r'-kA(t)^2 - kA(t) + k_w \cos(\log(A(t) + 1))',
    'CKR3': r'-kA(t) + k_w \cos(\log(A(t) + 1))',
    'CKR4': r'-kA(t)^{2} - kA(t)\exp(-k_{s}t) + k_{w}\cos(\log(A(t)+1))',
    'CKR5': r'-kA(t)^2 + k_q A(t) \log(\gamma t + 1)',
    'CKR6': r'-k\sqrt{(A(t) + k_f A(t)^{0.33})}',
    'CKR7': r'-kA(t)\exp(-k_s t) + k_m \sin(\sqrt{A(t)})',
    'CKR8': r'-kA(t)\exp(-k_s t) + k_w \cos(\log(A(t)+1))',
    'CKR9': r'\frac{-kA(t)^2 - kA(t) + k_t \sin(\log(A(t) + 1))}{(1 - (A(t)) - A(t))}',
    'CKR10': r'-k\sqrt{A(t)} + k_w \cos(\log(A(t) + 1))',
    'CKR11': r'-kA(t)^2 + k_t \sin(\log(A(t) + 1))',
    'CKR12': r'-kA(t)^2 + k_m \sin(\sqrt{A(t)})',
    'CKR13': r'-kA(t)\exp(-k_s t) + k_t \sin(\log(A(t)+1))',
    'CKR14': r'-kA(t) + k_p \sin(\omega A(t))',
    'CKR15': r'\frac{-k\sqrt{A(t)} - kA(t)\exp(-k_s t) + k_p\sin(\omega A(t))}{-k_p^2}',
    'CKR16': r'-k\sqrt{A(t)} - kA(t)\exp(-k_s t) + k_t\sin(\log(A(t)+1))',
    'CKR17': r'-kA(t) + k_f A(t)^{0.33}',
    'CKR18': r'-kA(t)\exp(-k_s t) + k_f A(t)^{0.33}',
    'CKR19': r'-kA(t)^2 + k_p \sin(\omega A(t))',
    'CKR20': r'-kA(t)^{2} - kA(t)\exp(-k_{s}t) + k_{t}\sin(\log(A(t) + 1))',
    'CKR21': r'-kA(t)\exp(-k_s t) + k_p\sin(\omega A(t))',
    'CKR22': r'-kA(t)\exp(-k_st) + k_qA(t)\log(\gamma t + 1)',
    'CKR23': r'-kA(t)^{2} - kA(t)\exp(-k_{s}t) + \frac{k_{z}A(t)^{2}}{(\beta A(t)^{4} + 1)}',
    'CKR24': r'-k\sqrt{A(t)} + k_p \sin(\omega A(t))',
    'CKR25': r'-k\sqrt{A(t)} - kA(t)^2 + k_f A(t)^{0.33}',
    'CKR26': r'-kA(t) + k_t \sin(\log(A(t) + 1))',
    'CKR27': r'-kA(t)^2 - kA(t)\exp(-k_s t) + k_m\sin(\sqrt{A(t)})',
    'CKR28': r'-kA(t)^{2} - kA(t)\exp(-k_{s}t) + k_{f}A(t)^{0.33}',
    'CKR29': r'-kA(t)\exp(-k_st) + k_zA(t)^2/(\beta A(t)^4 + 1)',
    'CKR30': r'-kA(t) - kA(t) \exp(-k_s t) + k_z A(t)^2 / (\beta A(t)^4 + 1)',
    'CKR31': r'-kA(t) - kA(t)\exp(-k_s t) + k_t\sin(\log(A(t) + 1))',
    'CKR32': r'-k\sqrt{A(t)} - kA(t) + k_w \cos(\log(A(t) + 1))',
    'CKR33': r'-kA(t) - kA(t)\exp(-k_s t) + k_f A(t)^{0.33}',
    'CKR34': r'-k\sqrt{A(t)} - kA(t)^{2} + k_{t}\sin(\log(A(t) + 1))',
    'CKR35': r'-kA(t)^2 + k_f A(t)^{0.33}',
    'CKR36': r'-kA(t) + k_q A(t) \log(\gamma t + 1)',
    'BPG1': r'r(1 - P(t)/K_0)P(t) + rP(t)^{0.33}',
    'BPG2': r'rP(t)\exp(-\gamma t) + rP(t)^2/(\alpha P(t) + 1)',
    'BPG3': r'\beta P(t)\sin(\omega t) + rP(t)\exp(-\gamma t)',
    'BPG4': r'r(-1 + P(t)/\alpha)(1 - P(t)/K_0)P(t) + r(1 - \exp(-\gamma P(t)))P(t)',
    'BPG5': r'r(1 - P(t)/K_0)P(t) + rP(t)/(1 + \exp(-\alpha(-\beta + P(t))))',
    'BPG6': r'r(1 - P(t)/K_0)P(t) + rP(t)^2/(\alpha P(t) + 1)',
    'BPG7': r'-Q\alpha P(t) + r(1 - P(t)/K_0)P(t) + rP(t)^{0.33} + rP(t)',
    'BPG8': r'r(-1+P(t)/\alpha)(1-P(t)/K_0)P(t) + r(1-P(t)/K_0)P(t) + rP(t)^{0.33}',
    'BPG9': r'r(1 - P(t)/K_0)P(t) + rP(t)^{0.33} + rP(t)',
    'BPG10': r'r(-1+P(t)/\alpha)(1-P(t)/K_0)P(t)+r(1-P(t)/K_0)P(t)+r(1-\exp(-\gamma P(t)))P(t)',
    'BPG11': r'rP(t)^{0.33} + rP(t)',
    'BPG12': r'r(1 - P(t)/K_0)P(t) + rP(t)^{0.33} + rP(t)\exp(-\gamma t)',
    'BPG13': r'\beta P(t)\sin(\omega t) + r(1 - P(t)/K_0)P(t)',
    'BPG14': r'\frac{1}{r(-1+P(t)/\alpha)(1-P(t)/K_0)P(t)+rP(t)+rP(t)/(1+\exp(-\alpha(-\beta+P(t))))}',
    'BPG15': r'r(1 - P(t)/K_0)P(t) + r(1 - \exp(-\gamma P(t)))P(t) + rP(t)\exp(-\gamma t)',
    'BPG16': r'rP(t)^{0.33} + rP(t)\exp(-\gamma t)',
    'BPG17': r'r(-1+P(t)/\alpha)(1-P(t)/K_0)P(t) + rP(t)^{0.33} + rP(t)',
    'BPG18': r'r(-1+P(t)/\alpha)(1-P(t)/K_0)P(t)+rP(t)^{0.33}',
    'BPG19': r'\beta P(t)\sin(\omega t) + r(1 - P(t)/K_0)P(t) + rP(t)',
    'BPG20': r'r(1 - P(t)/K_0)P(t) + rP(t)/t^{\alpha}',
    'BPG21': r'r(-1+P(t)/\alpha)(1-P(t)/K_0)P(t)+r(1-P(t)/K_0)P(t)+rP(t)/(1+\exp(-\alpha(-\beta+P(t))))',
    'BPG22': r'r(-1 + P(t)/\alpha)(1 - P(t)/K_0)P(t) + rP(t)/t^{\alpha}',
    'BPG23': r'r(1 - \exp(-\gamma P(t)))P(t) + rP(t)\exp(-\gamma t)',
    'BPG24': r'r(1 - P(t)/K_0)P(t) + r(1 - \exp(-\gamma P(t)))P(t)',
    'PO1': r'F_0 \sin(t) - \beta \sin(v(t)) - \omega_0^2 x(t)^3 - \omega_0^2 x(t) \exp(- x(t) )',
    'PO2': r'F_0 \sin(t) - \omega_0^2 x(t) - \omega_0^2 x(t) \exp(- x(t) )',
    'PO3': r'-\alpha v(t)^{3} - \mu (1 - x(t)^{2})v(t) - \omega_{0}^{2}x(t) - \omega_{0}^{2}x(t) \exp(- x(t) )',
    'PO4': r'F_0 \sin(t) - \beta \sin(v(t)) - 2\beta v(t)',
    'PO5': r'F_0 \sin(t) - \alpha v(t)^3 - \omega_0^2 (\gamma  v(t) ^{0.33} + 1) x(t) - \omega_0^2 x(t)',
    'PO6': r'-\beta\sin(v(t)) - 2\beta v(t) - \omega_0^2(\gamma  v(t) ^{0.33} + 1)x(t) - \omega_0^2 x(t)^3 - \omega_0^2 x(t)',
    'PO7': r'-\beta \log( v(t)  + 1) - 2\beta v(t) - \omega_0^2 x(t)^3',
    'PO8': r'-\alpha v(t)^3 - \beta  v(t) ^{0.33} - \omega_0^2 x(t)^3',
    'PO9': r'-\beta  v(t) ^{0.33} - \omega_0^2 x(t)^3',
    'PO10': r'F_0 \sin(t) - \mu (1 - x(t)^2) v(t) - \omega_0^2 (\gamma  v(t) ^{0.33} + 1) x(t) - \omega_0^2 x(t)',
    'PO11': r'F_0 \sin(t) - \omega_0^2 (\gamma t + 1) x(t) - \omega_0^2 x(t)^3 - \omega_0^2 x(t)',
    'PO12': r'-\beta \sin(v(t)) - \omega_0^2 (\gamma t + 1) x(t) - \omega_0^2 x(t)^3',
    'PO13': r'F_0 \sin(t) - \alpha v(t)^3 - \beta  v(t) ^{0.33} - \omega_0^2 (\gamma t + 1) x(t) - \omega_0^2 x(t)',
    'PO14': r'F_0 \sin(t) - \mu (1 - x(t)^2) v(t) - \omega_0^2 (\gamma  v(t) ^{0.33} + 1) x(t)',
    'PO15': r'F_0 \sin(t) - \beta \log( v(t)  + 1) - \beta \sin(v(t)) - 2\beta v(t) - \mu (1 - x(t)^2) v(t)',
    'PO16': r'F_0 \sin(t) - \omega_0^2 (\gamma  v(t) ^{0.33} + 1) x(t) - \omega_0^2 x(t) - \omega_0^2 x(t) \exp(- x(t) )',
    'PO17': r'F_0 \sin(t) - \beta \sin(x(t))v(t) - \beta \sin(v(t)) - \omega_0^2 x(t)^3',
    'PO18': r'F_0 \sin(t) - \beta \sin(x(t))v(t) - 2\beta v(t) - \omega_0^2 x(t)',
    'PO19': r'-\beta\sin(x(t))v(t) - \omega_0^2 x(t)',
    'PO20': r'-2\beta v(t) - \omega_0^2 x(t) \exp(- x(t) )',
    'PO21': r'-\alpha v(t)^{3} - \beta \log( v(t)  + 1) - 2\beta v(t) - \mu(1 - v(t)^{2})v(t) - \omega_{0}^{2}(\gamma  v(t) ^{0.33} + 1)x(t) - \beta \log( v(t)  + 1) - 2\beta v(t) - \mu(1 - v(t)^{2})v(t) - \omega_{0}^{2}(\gamma  v(t) ^{0.33} + 1)x(t) - \beta \log( v(t)  + 1) - 2\beta v(t) - \mu(1 - v(t)^{2})v(t) - \omega_{0}^{2}(\gamma  v(t) ^{0.33} + 1)x(t) - \beta \log( v(t)  + 1) - 2\beta v(t) - \mu(1 - v(t)^{2})v(t) - \omega_{0}^{2}(\gamma  v(t) ^{0.33} + 1)x(t) - \beta \log( v(t) ^{0.33} + 1)x(t) -',
    'PO22': r'F_0 \sin(t) - \beta \sin(x(t))v(t)',
    'PO23': r'-2\beta v(t) - \beta \exp(- x(t) )v(t) - \mu(1 - x(t)^2)v(t) - \omega_0^2 x(t)^3',
    'PO24': r'F_0 \sin(t) - \beta \log( v(t)  + 1) - \omega_0^2 x(t) \exp(- x(t) )',
    'PO25': r'F_0 \sin(t) - \alpha v(t)^3 - \beta \log( v(t)  + 1)',
    'PO26': r'F_0\sin(t) - \beta\sin(v(t))',
    'PO27': r'F_0 \sin(t) - \beta \log( v(t)  + 1) - 2\beta v(t) - \omega_0^2 x(t)^3',
    'PO28': r'F_0 \sin(t) - \alpha v(t)^3 - 2\beta v(t) - \beta \exp(- v(t) )v(t)',
    'PO29': r'-2\beta v(t) - \omega_0^2 (\gamma  v(t) ^{0.33} + 1)x(t) - \omega_0^2 x(t)^3 - \omega_0^2 x(t)',
    'PO30': r'-\mu(1-x(t)^2)v(t) - \omega_0^2(\gamma t+1)x(t) - \omega_0^2x(t)^3',
    'PO31': r'-\alpha v(t)^3 - \beta \sin(x(t))v(t) - \beta \sin(v(t)) - \omega_0^2 x(t)^3',
    'PO32': r'-\omega_0^2(\gamma v(t) ^{0.33}+1)x(t) - \omega_0^2x(t)^3',
    'PO33': r'F_0 \sin(t) - \alpha v(t)^3 - \beta \exp(- v(t) )v(t) - \omega_0^2 x(t)^3',
    'PO34': r'-2\beta v(t) - \mu (1 - v(t)^2)v(t) - \omega_0^2 (\gamma t + 1)x(t) - \omega_0^2 x(t)',
    'PO35': r'-2\beta v(t) - \mu (1 - v(t)^2)v(t) - \omega_0^2 (\gamma  v(t) ^{0.33} + 1)x(t)',
    'PO36': r'F_0 \sin(t) - \beta \sin(v(t)) - \omega_0^2 (\gamma  v(t) ^{0.33} + 1) x(t)',
    'PO37': r'F_0 \sin(t) - \beta \exp(- x(t) )v(t)',
    'PO38': r'F_0 \sin(t) - \alpha v(t)^3 - 2\beta v(t) - \omega_0^2 (\gamma t + 1) x(t)',
    'PO39': r'-\beta \sin(v(t)) - \mu (1 - x(t)^2)v(t) - \omega_0^2 x(t) \exp(- x(t) )',
    'PO40': r'F_0 \sin(t) - \alpha v(t)^3 - \beta \exp(- x(t) )v(t) - \mu(1 - v(t)^2)v(t)',
    'PO41': r'F_0 \sin(t) - \beta  v(t) ^{0.33} - \omega_0^2 (\gamma  v(t) ^{0.33} + 1) x(t) - \omega_0^2 x(t)^3 - \omega_0^2 x(t)',
    'PO42': r'-\mu(1-x(t)^2)v(t) - \omega_0^2 x(t) \exp(- x(t) )',
    'PO43': r'F_0 \sin(t) - \alpha v(t)^3 - \beta \sin(x(t))v(t) - 2\beta v(t)',
    'PO44': r'F_0 \sin(t) - \beta \sin(x(t))v(t) - 2\beta v(t) - \mu (1 - x(t)^2)v(t) - \omega_0^2 x(t) \exp(- x(t) )',
    'MatSci1': r'E_{0}\epsilon(-\alpha_{T}(T-T_{0})+1) - \beta(T-T_{0}) + \epsilon^{M}\eta(T-T_{0})',
    'MatSci2': r'H\epsilon^3 + K\epsilon^N \exp(-Q/(RT)) + \epsilon\eta \sin(T - T_0)',
    'MatSci3': r'H\epsilon^3 + \eta(T - T_0)\exp(-\epsilon)',
    'MatSci4': r'H\epsilon^3 + K\epsilon^N \exp(-Q/(RT)) + \epsilon^3 \eta (T - T_0)',
    'MatSci5': r'E_0\epsilon^2 + \eta(T - T_0)\log(\epsilon + 1)',
    'MatSci6': r'E_0\epsilon(-\alpha_T(T-T_0)+1) + K\epsilon^N \exp(-Q/(RT)) + \epsilon^M \eta(T-T_0)',
    'MatSci7': r'E_0\epsilon(-\alpha_T(T-T_0)+1) + \epsilon\eta(T-T_0)^2',
    'MatSci8': r'H\epsilon^3 - \beta(T - T_0) + \eta(T - T_0)\log(\epsilon + 1)',
    'MatSci9': r'E_0\epsilon(-\alpha_T(T-T_0)+1) + \epsilon^M\eta(T-T_0)',
    'MatSci10': r'H\epsilon^3 - \beta(T - T_0) + \epsilon^3 \eta(T - T_0)',
    'MatSci11': r'H\epsilon^3 + K\epsilon^N \exp(-Q/(RT)) + \epsilon\eta(T - T_0)^2',
    'MatSci12': r'K\epsilon^N \exp(-Q/(RT)) + \epsilon^3 \eta (T - T_0)',
    'MatSci13': r'E_{0}\epsilon(-\alpha_{T}(T-T_{0})+1) + K\epsilon^{N}\exp(-Q/(RT)) + \epsilon\eta\exp(-(T-T_{0})^{2})',
    'MatSci14': r'-\beta(T-T_0) + \epsilon\eta \exp(-(T-T_0)^2)',
    'MatSci15': r'-\beta(T-T_0) + \epsilon^M \eta(T-T_0)',
    'MatSci16': r'E_0\epsilon(-\alpha_T(T-T_0)+1) + \epsilon\eta\exp(-(T-T_0)^2)',
    'MatSci17': r'E_0\epsilon^2 + \epsilon\eta(T-T_0)^2',
    'MatSci18': r'E_0 \epsilon (-\alpha_T (T - T_0) + 1) - \beta (T - T_0) + \eta (T - T_0) \log(\epsilon + 1)',
    'MatSci19': r'H\epsilon^3 + \eta(T - T_0)\sin(\epsilon)',
    'MatSci20': r'E_0\epsilon^2 - \beta(T-T_0) + \epsilon^3\eta(T-T_0)',
    'MatSci21': r'E_0\epsilon^2 + \epsilon\eta\sin(T - T_0)',
    'MatSci22': r'K\epsilon^{N}\exp(-Q/(RT)) - \beta(T-T_{0}) + \eta(T-T_{0})\log(\epsilon+1)',
    'MatSci23': r'E_0\epsilon(-\alpha_T(T-T_0)+1) + H\epsilon^3 + \eta(T-T_0)\sin(\epsilon)',
    'MatSci24': r'K\epsilon^N \exp(-Q/(RT)) + \epsilon\eta \sin(T - T_0)',
    'MatSci25': r'E_{0}\epsilon^{2} + E_{0}\epsilon(-\alpha_{T}(T-T_{0})+1) + \eta(T-T_{0})\log(\epsilon+1)',
}

# ----------------------------------------------------------------------------- the laws
# Table 4 in engine.expr syntax. Table 4 prints a cube root as the exponent 0.33; App. D
# (Fig. 14, BPG1) shows the same term as P^(1/3), so the exact 1/3 is used. ``roles`` maps a
# symbol to the key of its range in RANGES when that differs from the symbol's name.

CHEMISTRY = [
    ("CKR1", "-k*A**2 + k_z*A**2/(beta*A**4 + 1)"),
    ("CKR2", "-k*A**2 - k*A + k_w*cos(log(A + 1))"),
    ("CKR3", "-k*A + k_w*cos(log(A + 1))"),
    ("CKR4", "-k*A**2 - k*A*exp(-k_s*t) + k_w*cos(log(A + 1))"),
    ("CKR5", "-k*A**2 + k_q*A*log(gamma*t + 1)"),
    ("CKR6", "-k*sqrt(A + k_f*A**(1/3))"),
    ("CKR7", "-k*A*exp(-k_s*t) + k_m*sin(sqrt(A))"),
    ("CKR8", "-k*A*exp(-k_s*t) + k_w*cos(log(A + 1))"),
    ("CKR9", "-k*A**2 - k*A + k_t*sin(log(A + 1))"),
    ("CKR10", "-k*sqrt(A) + k_w*cos(log(A + 1))"),
    ("CKR11", "-k*A**2 + k_t*sin(log(A + 1))"),
    ("CKR12", "-k*A**2 + k_m*sin(sqrt(A))"),
    ("CKR13", "-k*A*exp(-k_s*t) + k_t*sin(log(A + 1))"),
    ("CKR14", "-k*A + k_p*sin(omega*A)"),
    ("CKR15", "-k*sqrt(A) - k*A*exp(-k_s*t) + k_p*sin(omega*A)"),
    ("CKR16", "-k*sqrt(A) - k*A*exp(-k_s*t) + k_t*sin(log(A + 1))"),
    ("CKR17", "-k*A + k_f*A**(1/3)"),
    ("CKR18", "-k*A*exp(-k_s*t) + k_f*A**(1/3)"),
    ("CKR19", "-k*A**2 + k_p*sin(omega*A)"),
    ("CKR20", "-k*A**2 - k*A*exp(-k_s*t) + k_t*sin(log(A + 1))"),
    ("CKR21", "-k*A*exp(-k_s*t) + k_p*sin(omega*A)"),
    ("CKR22", "-k*A*exp(-k_s*t) + k_q*A*log(gamma*t + 1)"),
    ("CKR23", "-k*A**2 - k*A*exp(-k_s*t) + k_z*A**2/(beta*A**4 + 1)"),
    ("CKR24", "-k*sqrt(A) + k_p*sin(omega*A)"),
    ("CKR25", "-k*sqrt(A) - k*A**2 + k_f*A**(1/3)"),
    ("CKR26", "-k*A + k_t*sin(log(A + 1))"),
    ("CKR27", "-k*A**2 - k*A*exp(-k_s*t) + k_m*sin(sqrt(A))"),
    ("CKR28", "-k*A**2 - k*A*exp(-k_s*t) + k_f*A**(1/3)"),
    ("CKR29", "-k*A*exp(-k_s*t) + k_z*A**2/(beta*A**4 + 1)"),
    ("CKR30", "-k*A - k*A*exp(-k_s*t) + k_z*A**2/(beta*A**4 + 1)"),
    ("CKR31", "-k*A - k*A*exp(-k_s*t) + k_t*sin(log(A + 1))"),
    ("CKR32", "-k*sqrt(A) - k*A + k_w*cos(log(A + 1))"),
    ("CKR33", "-k*A - k*A*exp(-k_s*t) + k_f*A**(1/3)"),
    ("CKR34", "-k*sqrt(A) - k*A**2 + k_t*sin(log(A + 1))"),
    ("CKR35", "-k*A**2 + k_f*A**(1/3)"),
    ("CKR36", "-k*A + k_q*A*log(gamma*t + 1)"),
]

_ALLEE = {"alpha": "alpha_allee"}
BIOLOGY = [
    ("BPG1", "r*(1 - P/K0)*P + r*P**(1/3)", {}),
    ("BPG2", "r*P*exp(-gamma*t) + r*P**2/(alpha*P + 1)", {"alpha": "alpha_sat", "gamma": "gamma_t"}),
    ("BPG3", "beta*P*sin(omega*t) + r*P*exp(-gamma*t)", {"beta": "beta_season", "gamma": "gamma_t"}),
    ("BPG4", "r*(-1 + P/alpha)*(1 - P/K0)*P + r*(1 - exp(-gamma*P))*P", {**_ALLEE, "gamma": "gamma_P"}),
    ("BPG5", "r*(1 - P/K0)*P + r*P/(1 + exp(-alpha*(-beta + P)))", {"alpha": "alpha_steep", "beta": "beta_switch"}),
    ("BPG6", "r*(1 - P/K0)*P + r*P**2/(alpha*P + 1)", {"alpha": "alpha_sat"}),
    ("BPG7", "-Q*alpha*P + r*(1 - P/K0)*P + r*P**(1/3) + r*P", {"alpha": "alpha_catch"}),
    ("BPG8", "r*(-1 + P/alpha)*(1 - P/K0)*P + r*(1 - P/K0)*P + r*P**(1/3)", _ALLEE),
    ("BPG9", "r*(1 - P/K0)*P + r*P**(1/3) + r*P", {}),
    ("BPG10", "r*(-1 + P/alpha)*(1 - P/K0)*P + r*(1 - P/K0)*P + r*(1 - exp(-gamma*P))*P", {**_ALLEE, "gamma": "gamma_P"}),
    ("BPG11", "r*P**(1/3) + r*P", {}),
    ("BPG12", "r*(1 - P/K0)*P + r*P**(1/3) + r*P*exp(-gamma*t)", {"gamma": "gamma_t"}),
    ("BPG13", "beta*P*sin(omega*t) + r*(1 - P/K0)*P", {"beta": "beta_season"}),
    ("BPG14", "r*(-1 + P/alpha)*(1 - P/K0)*P + r*P + r*P/(1 + exp(-alpha*(-beta + P)))", {**_ALLEE, "beta": "beta_switch"}),
    ("BPG15", "r*(1 - P/K0)*P + r*(1 - exp(-gamma*P))*P + r*P*exp(-gamma*t)", {"gamma": "gamma_tP"}),
    ("BPG16", "r*P**(1/3) + r*P*exp(-gamma*t)", {"gamma": "gamma_t"}),
    ("BPG17", "r*(-1 + P/alpha)*(1 - P/K0)*P + r*P**(1/3) + r*P", _ALLEE),
    ("BPG18", "r*(-1 + P/alpha)*(1 - P/K0)*P + r*P**(1/3)", _ALLEE),
    ("BPG19", "beta*P*sin(omega*t) + r*(1 - P/K0)*P + r*P", {"beta": "beta_season"}),
    ("BPG20", "r*(1 - P/K0)*P + r*P/t**alpha", {"alpha": "alpha_exp"}),
    ("BPG21", "r*(-1 + P/alpha)*(1 - P/K0)*P + r*(1 - P/K0)*P + r*P/(1 + exp(-alpha*(-beta + P)))", {**_ALLEE, "beta": "beta_switch"}),
    ("BPG22", "r*(-1 + P/alpha)*(1 - P/K0)*P + r*P/t**alpha", {"alpha": "alpha_allee_exp"}),
    ("BPG23", "r*(1 - exp(-gamma*P))*P + r*P*exp(-gamma*t)", {"gamma": "gamma_tP"}),
    ("BPG24", "r*(1 - P/K0)*P + r*(1 - exp(-gamma*P))*P", {"gamma": "gamma_P"}),
]

PHYSICS = [
    ("PO1", "F0*sin(t) - beta*sin(v) - omega0**2*x**3 - omega0**2*x*exp(-abs(x))"),
    ("PO2", "F0*sin(t) - omega0**2*x - omega0**2*x*exp(-abs(x))"),
    ("PO3", "-alpha*v**3 - mu*(1 - x**2)*v - omega0**2*x - omega0**2*x*exp(-abs(x))"),
    ("PO4", "F0*sin(t) - beta*sin(v) - 2*beta*v"),
    ("PO5", "F0*sin(t) - alpha*v**3 - omega0**2*(gamma*abs(v)**(1/3) + 1)*x - omega0**2*x"),
    ("PO6", "-beta*sin(v) - 2*beta*v - omega0**2*(gamma*abs(v)**(1/3) + 1)*x - omega0**2*x**3 - omega0**2*x"),
    ("PO7", "-beta*log(abs(v) + 1) - 2*beta*v - omega0**2*x**3"),
    ("PO8", "-alpha*v**3 - beta*abs(v)**(1/3) - omega0**2*x**3"),
    ("PO9", "-beta*abs(v)**(1/3) - omega0**2*x**3"),
    ("PO10", "F0*sin(t) - mu*(1 - x**2)*v - omega0**2*(gamma*abs(v)**(1/3) + 1)*x - omega0**2*x"),
    ("PO11", "F0*sin(t) - omega0**2*(gamma*t + 1)*x - omega0**2*x**3 - omega0**2*x"),
    ("PO12", "-beta*sin(v) - omega0**2*(gamma*t + 1)*x - omega0**2*x**3"),
    ("PO13", "F0*sin(t) - alpha*v**3 - beta*abs(v)**(1/3) - omega0**2*(gamma*t + 1)*x - omega0**2*x"),
    ("PO14", "F0*sin(t) - mu*(1 - x**2)*v - omega0**2*(gamma*abs(v)**(1/3) + 1)*x"),
    ("PO15", "F0*sin(t) - beta*log(abs(v) + 1) - beta*sin(v) - 2*beta*v - mu*(1 - x**2)*v"),
    ("PO16", "F0*sin(t) - omega0**2*(gamma*abs(v)**(1/3) + 1)*x - omega0**2*x - omega0**2*x*exp(-abs(x))"),
    ("PO17", "F0*sin(t) - beta*sin(x)*v - beta*sin(v) - omega0**2*x**3"),
    ("PO18", "F0*sin(t) - beta*sin(x)*v - 2*beta*v - omega0**2*x"),
    ("PO19", "-beta*sin(x)*v - omega0**2*x"),
    ("PO20", "-2*beta*v - omega0**2*x*exp(-abs(x))"),
    ("PO21", "-alpha*v**3 - beta*log(abs(v) + 1) - 2*beta*v - mu*(1 - v**2)*v - omega0**2*(gamma*abs(v)**(1/3) + 1)*x"),
    ("PO22", "F0*sin(t) - beta*sin(x)*v"),
    ("PO23", "-2*beta*v - beta*exp(-abs(x))*v - mu*(1 - x**2)*v - omega0**2*x**3"),
    ("PO24", "F0*sin(t) - beta*log(abs(v) + 1) - omega0**2*x*exp(-abs(x))"),
    ("PO25", "F0*sin(t) - alpha*v**3 - beta*log(abs(v) + 1)"),
    ("PO26", "F0*sin(t) - beta*sin(v)"),
    ("PO27", "F0*sin(t) - beta*log(abs(v) + 1) - 2*beta*v - omega0**2*x**3"),
    ("PO28", "F0*sin(t) - alpha*v**3 - 2*beta*v - beta*exp(-abs(v))*v"),
    ("PO29", "-2*beta*v - omega0**2*(gamma*abs(v)**(1/3) + 1)*x - omega0**2*x**3 - omega0**2*x"),
    ("PO30", "-mu*(1 - x**2)*v - omega0**2*(gamma*t + 1)*x - omega0**2*x**3"),
    ("PO31", "-alpha*v**3 - beta*sin(x)*v - beta*sin(v) - omega0**2*x**3"),
    ("PO32", "-omega0**2*(gamma*abs(v)**(1/3) + 1)*x - omega0**2*x**3"),
    ("PO33", "F0*sin(t) - alpha*v**3 - beta*exp(-abs(v))*v - omega0**2*x**3"),
    ("PO34", "-2*beta*v - mu*(1 - v**2)*v - omega0**2*(gamma*t + 1)*x - omega0**2*x"),
    ("PO35", "-2*beta*v - mu*(1 - v**2)*v - omega0**2*(gamma*abs(v)**(1/3) + 1)*x"),
    ("PO36", "F0*sin(t) - beta*sin(v) - omega0**2*(gamma*abs(v)**(1/3) + 1)*x"),
    ("PO37", "F0*sin(t) - beta*exp(-abs(x))*v"),
    ("PO38", "F0*sin(t) - alpha*v**3 - 2*beta*v - omega0**2*(gamma*t + 1)*x"),
    ("PO39", "-beta*sin(v) - mu*(1 - x**2)*v - omega0**2*x*exp(-abs(x))"),
    ("PO40", "F0*sin(t) - alpha*v**3 - beta*exp(-abs(x))*v - mu*(1 - v**2)*v"),
    ("PO41", "F0*sin(t) - beta*abs(v)**(1/3) - omega0**2*(gamma*abs(v)**(1/3) + 1)*x - omega0**2*x**3 - omega0**2*x"),
    ("PO42", "-mu*(1 - x**2)*v - omega0**2*x*exp(-abs(x))"),
    ("PO43", "F0*sin(t) - alpha*v**3 - beta*sin(x)*v - 2*beta*v"),
    ("PO44", "F0*sin(t) - beta*sin(x)*v - 2*beta*v - mu*(1 - x**2)*v - omega0**2*x*exp(-abs(x))"),
]

MATERIAL_SCIENCE = [
    ("MatSci1", "E0*epsilon*(-alpha_T*(T - T0) + 1) - beta*(T - T0) + epsilon**M*eta*(T - T0)"),
    ("MatSci2", "H*epsilon**3 + K*epsilon**N*exp(-Q/(R*T)) + epsilon*eta*sin(T - T0)"),
    ("MatSci3", "H*epsilon**3 + eta*(T - T0)*exp(-epsilon)"),
    ("MatSci4", "H*epsilon**3 + K*epsilon**N*exp(-Q/(R*T)) + epsilon**3*eta*(T - T0)"),
    ("MatSci5", "E0*epsilon**2 + eta*(T - T0)*log(epsilon + 1)"),
    ("MatSci6", "E0*epsilon*(-alpha_T*(T - T0) + 1) + K*epsilon**N*exp(-Q/(R*T)) + epsilon**M*eta*(T - T0)"),
    ("MatSci7", "E0*epsilon*(-alpha_T*(T - T0) + 1) + epsilon*eta*(T - T0)**2"),
    ("MatSci8", "H*epsilon**3 - beta*(T - T0) + eta*(T - T0)*log(epsilon + 1)"),
    ("MatSci9", "E0*epsilon*(-alpha_T*(T - T0) + 1) + epsilon**M*eta*(T - T0)"),
    ("MatSci10", "H*epsilon**3 - beta*(T - T0) + epsilon**3*eta*(T - T0)"),
    ("MatSci11", "H*epsilon**3 + K*epsilon**N*exp(-Q/(R*T)) + epsilon*eta*(T - T0)**2"),
    ("MatSci12", "K*epsilon**N*exp(-Q/(R*T)) + epsilon**3*eta*(T - T0)"),
    ("MatSci13", "E0*epsilon*(-alpha_T*(T - T0) + 1) + K*epsilon**N*exp(-Q/(R*T)) + epsilon*eta*exp(-(T - T0)**2)"),
    ("MatSci14", "-beta*(T - T0) + epsilon*eta*exp(-(T - T0)**2)"),
    ("MatSci15", "-beta*(T - T0) + epsilon**M*eta*(T - T0)"),
    ("MatSci16", "E0*epsilon*(-alpha_T*(T - T0) + 1) + epsilon*eta*exp(-(T - T0)**2)"),
    ("MatSci17", "E0*epsilon**2 + epsilon*eta*(T - T0)**2"),
    ("MatSci18", "E0*epsilon*(-alpha_T*(T - T0) + 1) - beta*(T - T0) + eta*(T - T0)*log(epsilon + 1)"),
    ("MatSci19", "H*epsilon**3 + eta*(T - T0)*sin(epsilon)"),
    ("MatSci20", "E0*epsilon**2 - beta*(T - T0) + epsilon**3*eta*(T - T0)"),
    ("MatSci21", "E0*epsilon**2 + epsilon*eta*sin(T - T0)"),
    ("MatSci22", "K*epsilon**N*exp(-Q/(R*T)) - beta*(T - T0) + eta*(T - T0)*log(epsilon + 1)"),
    ("MatSci23", "E0*epsilon*(-alpha_T*(T - T0) + 1) + H*epsilon**3 + eta*(T - T0)*sin(epsilon)"),
    ("MatSci24", "K*epsilon**N*exp(-Q/(R*T)) + epsilon*eta*sin(T - T0)"),
    ("MatSci25", "E0*epsilon**2 + E0*epsilon*(-alpha_T*(T - T0) + 1) + eta*(T - T0)*log(epsilon + 1)"),
]


def _physics_roles(template: str) -> dict[str, str]:
    if "gamma" not in template:
        return {}
    return {"gamma": "gamma_t" if "gamma*t" in template else "gamma_v"}


def _material_roles(template: str) -> dict[str, str]:
    if "eta" not in template:
        return {}
    if "exp(-(T - T0)**2)" in template:
        return {"eta": "eta_peak"}
    if "sin(T - T0)" in template:
        return {"eta": "eta_sin"}
    if "(T - T0)**2" in template:
        return {"eta": "eta_sq"}
    return {"eta": "eta_lin"}


def equation_specs() -> list[dict]:
    """Every law in catalog order, with its domain, template and symbol roles."""
    specs = [{"name": n, "domain": "chemistry", "template": t, "roles": {}} for n, t in CHEMISTRY]
    specs += [{"name": n, "domain": "biology", "template": t, "roles": dict(r)} for n, t, r in BIOLOGY]
    specs += [{"name": n, "domain": "physics", "template": t, "roles": _physics_roles(t)} for n, t in PHYSICS]
    specs += [
        {"name": n, "domain": "material_science", "template": t, "roles": _material_roles(t)}
        for n, t in MATERIAL_SCIENCE
    ]
    return specs


# ----------------------------------------------------------------------------- repairs

_REPAIRS = {
    "CKR4": (
        "Row body kept as printed. The continuation header just above it holds a garbled extra "
        "line ('l_{1}A(t)^{2} = l_{1}A(t) = rrr(-l_{1}t) + l_{1} = rrr(-l_{1}rr(-A(t)) + 1))'); its "
        "shape - a squared term, a term with an exponential in -t, a function of log(A+1) - is an "
        "OCR echo of this same row, so it carries no extra term and was ignored."
    ),
    "CKR9": (
        "Table 4 prints the law over the denominator (1 - (A(t)) - A(t)). No other row has a "
        "denominator of this kind, it would make the rate singular at A = 0.5 mol/L, and its "
        "duplicated A(t) is typical of the table's OCR damage, so it was dropped: "
        "-kA^2 - kA + k_t sin(log(A+1)), the CKR2 known terms with the sin(log(A+1)) synthetic "
        "term of CKR11/CKR20/CKR26."
    ),
    "CKR15": (
        "Table 4 prints the law divided by a stray -k_p^2. No other row has such a factor (it "
        "would only flip the sign and rescale the whole rate), so it was dropped as OCR damage: "
        "-k sqrt(A) - kA exp(-k_s t) + k_p sin(omega A), the CKR16 known terms with the "
        "sin(omega A) synthetic term of CKR14/CKR19/CKR21/CKR24."
    ),
    "BPG14": (
        "Table 4 wraps the whole law in a stray 1/(...). A reciprocal growth rate has no "
        "ecological reading and no other row has one, so it was dropped as OCR damage: the sum of "
        "the Allee-logistic, linear and sigmoidal-switch terms, the same building blocks as BPG17 "
        "and BPG21. As printed, alpha is both the Allee threshold and the switch steepness, and "
        "takes one value."
    ),
    "PO21": (
        "Table 4's cell repeats the run '- beta log(|v|+1) - 2 beta v - mu(1 - v^2)v - "
        "omega0^2(gamma|v|^0.33 + 1)x' four times and ends in a truncated fragment "
        "('- beta log(|v|^0.33 + 1)x(t) -'), an OCR loop. One copy of each distinct term was "
        "kept and the fragment discarded: -alpha v^3 - beta log(|v|+1) - 2 beta v - "
        "mu(1 - v^2)v - omega0^2(gamma|v|^(1/3) + 1)x."
    ),
}

_ABS_TERMS = {
    "abs(x)": "exp(-|x|)",
    "log(abs(v) + 1)": "log(|v| + 1)",
    "abs(v)**(1/3)": "|v|^(1/3)",
    "exp(-abs(v))": "exp(-|v|)",
}


def repair_text(name: str, template: str) -> str:
    """What was changed relative to the printed row, and why (empty when nothing was)."""
    parts = []
    if name in _REPAIRS:
        parts.append(_REPAIRS[name])
    restored = [shown for pattern, shown in _ABS_TERMS.items() if pattern in template]
    if restored:
        extra = " (here the opening bar is missing too)" if name == "PO32" else ""
        parts.append(
            "Absolute-value bars restored in " + ", ".join(restored) + ": the text rendering of "
            "Table 4 drops |.| and leaves doubled spaces in their place" + extra + "; App. D's "
            "physics example prints the same kind of term with the bars, exp(-|x(t)|)."
        )
    if "(1/3)" in template:
        parts.append(
            "Exponent 0.33 read as exactly 1/3: Table 4 prints the cube root rounded, and App. D "
            "(Fig. 14) writes the same power as P^(1/3)."
        )
    return " ".join(parts)


NOTES = {
    "CKR6": (
        "Kept as printed, with the fractional-order term inside the square root (Table 4 shows "
        "the parentheses explicitly); this law only decays, so its draws need slow rates to "
        "keep A > 0 over the window."
    ),
    "BPG20": (
        "The law is singular at t = 0 (P/t^alpha), so this trajectory starts at t = 1 and its "
        "5000 samples cover [1, 60]."
    ),
    "BPG22": (
        "The law is singular at t = 0 (P/t^alpha), so this trajectory starts at t = 1 and its "
        "5000 samples cover [1, 60]. As printed, alpha is both the Allee threshold and the time "
        "exponent, and takes one value."
    ),
    "BPG15": "As printed, gamma appears in both exp(-gamma P) and exp(-gamma t) and takes one value.",
    "BPG23": "As printed, gamma appears in both exp(-gamma P) and exp(-gamma t) and takes one value.",
    "BPG21": "As printed, alpha is both the Allee threshold and the switch steepness, and takes one value.",
}

T_SPANS = {"BPG20": [1.0, 60.0], "BPG22": [1.0, 60.0]}


# ----------------------------------------------------------------------------- sampling


def round_sig(value: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    return float(f"{value:.{digits}g}")


def draw(rng: np.random.Generator, low: float, high: float) -> float:
    if low > 0 and high / low >= 10:
        return float(math.exp(rng.uniform(math.log(low), math.log(high))))
    return float(rng.uniform(low, high))


def constant_names(template: str, domain: str) -> list[str]:
    names = ls.DOMAINS[domain].input_names
    expr = parse(template, names, allow_free_symbols=True)
    return sorted(s.name for s in expr.free_symbols if s.name not in names)


def task_seed(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def term_shares(entry: dict, X: np.ndarray, y: np.ndarray) -> list[float]:
    """RMS of each additive term of the law over the RMS of the target."""
    import sympy as sp

    names = ls.DOMAINS[entry["domain"]].input_names
    expr = parse(entry["template"], names, allow_free_symbols=True)
    terms = expr.args if isinstance(expr, sp.Add) else (expr,)
    values = {sp.Symbol(k, real=True): v for k, v in entry["constants"].items()}
    scale = float(np.sqrt(np.mean(y**2)))
    shares = []
    for term in terms:
        f = compile_numpy(term.xreplace(values), names)
        shares.append(float(np.sqrt(np.mean(f(X) ** 2)) / scale) if scale > 0 else 0.0)
    return shares


def evaluate_draw(entry: dict) -> tuple[list[str], dict]:
    """Quality problems of one draw (empty when accepted) and its measured statistics."""
    try:
        X, y = ls.simulate(entry)
    except ls.SimulationError as exc:
        return [f"not solvable: {exc}"], {}
    stats = ls.quality_metrics(entry, X, y)
    problems = ls.quality_violations(entry, stats, THRESHOLDS)
    if problems:
        return problems, stats
    if ls.DOMAINS[entry["domain"]].dynamical:
        try:
            X_tight, _ = ls.simulate(entry, solver=THRESHOLDS["tolerance_check"])
        except ls.SimulationError as exc:
            return [f"not solvable at the tighter tolerance: {exc}"], stats
        scale = np.max(np.abs(X), axis=0)
        scale[scale == 0] = 1.0
        stats["tolerance_discrepancy"] = float(np.max(np.abs(X_tight - X) / scale))
        if stats["tolerance_discrepancy"] > THRESHOLDS["max_tolerance_discrepancy"]:
            return [f"ill-conditioned: solves disagree by {stats['tolerance_discrepancy']:.3g}"], stats
    shares = term_shares(entry, X, y)
    stats["min_term_share"] = min(shares)
    if stats["min_term_share"] < THRESHOLDS["min_term_share"]:
        return [f"a term is invisible: share {stats['min_term_share']:.3g}"], stats
    return [], stats


def build_entry(spec: dict, verbose: bool = False) -> dict:
    name, domain, template = spec["name"], spec["domain"], spec["template"]
    seed = task_seed(name)
    rng = np.random.default_rng(seed)
    sampled = [c for c in constant_names(template, domain) if c not in FIXED]
    ranges = {}
    for c in sampled:
        role = spec["roles"].get(c, c)
        low, high, unit, _ = RANGES[domain][role]
        ranges[c] = {"role": role, "low": low, "high": high, "unit": unit}
    reasons: dict[str, int] = {}
    for attempt in range(1, THRESHOLDS["max_attempts"] + 1):
        constants = {c: round_sig(draw(rng, ranges[c]["low"], ranges[c]["high"])) for c in sampled}
        for c in constant_names(template, domain):
            if c in FIXED:
                constants[c] = FIXED[c][0]
        ics = {k: round_sig(draw(rng, lo, hi)) for k, (lo, hi, _) in INITIAL_CONDITIONS[domain].items()}
        entry = {
            "name": name,
            "domain": domain,
            "paper": PAPER_ROWS[name],
            "template": template,
            "constants": dict(sorted(constants.items())),
            "initial_conditions": ics,
            "seed": seed,
        }
        if name in T_SPANS:
            entry["t_span"] = T_SPANS[name]
        problems, stats = evaluate_draw(entry)
        if not problems:
            entry["attempts"] = attempt
            entry["repair"] = repair_text(name, template)
            entry["notes"] = NOTES.get(name, "")
            entry["sampling"] = ranges
            entry["quality"] = {k: float(f"{v:.4g}") for k, v in stats.items()}
            if verbose:
                print(f"{name:9s} accepted after {attempt:4d} draw(s); rejections: {summarise(reasons)}")
            return entry
        key = problems[0].split(":")[0]
        reasons[key] = reasons.get(key, 0) + 1
    raise SystemExit(f"{name}: no acceptable draw in {THRESHOLDS['max_attempts']} attempts ({summarise(reasons)})")


def summarise(reasons: dict[str, int]) -> str:
    return ", ".join(f"{k} x{v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])) or "none"


def header() -> dict:
    return {
        "format": CATALOG_FORMAT,
        "suite": ls.SUITE,
        "title": "LLM-SRBench LSR-Synth: 129 synthetic laws in four scientific domains",
        "source": (
            "P. Shojaee, N.-H. Nguyen, K. Meidani, A. Barati Farimani, K. D. Doan, C. K. Reddy. "
            "LLM-SRBench: A New Benchmark for Scientific Equation Discovery with Large Language "
            "Models. ICML 2025 (PMLR 267), arXiv:2504.10415. Laws: Table 4; data protocol: App. A.2."
        ),
        "written_by": "scripts/build_lsr_synth_catalog.py (Kepler Lab); the constants and initial conditions are ours, the paper does not publish them",
        "naming": "Equation names follow Table 4 (1-based: CKR1-CKR36, BPG1-BPG24, PO1-PO44, MatSci1-MatSci25); the figures of App. D and the released files count from 0.",
        "sampling_protocol": [
            "Each law gets a NumPy PCG64 generator seeded with zlib.crc32 of its name (stored as 'seed'); draws are consumed in a fixed order: constants sorted by name, then initial conditions.",
            "A range [low, high] is sampled log-uniformly when low > 0 and high/low >= 10, uniformly otherwise.",
            "Every drawn value is rounded to 4 significant digits before any data are generated, so the stored values are exactly the ones used.",
            "A symbol repeated within one law (e.g. k in -kA^2 - kA) is one constant with one value, as in App. D's examples; distinct symbols (k, k_z, k_w, ...) are independent.",
            "A draw is kept when it meets every quality threshold below; otherwise the next draw from the same stream is tried. 'attempts' counts the draws used (1 = the first was kept).",
            "Dynamical laws are integrated with scipy.integrate.solve_ivp (RK45, rtol 1e-8, atol 1e-10) on 5000 evenly spaced times in [0, 60] (t_span in an entry overrides this window); physics oscillators are integrated as x' = v, v' = law(x, t, v). The target is the law evaluated at each sampled state and time.",
            "Material-science laws are evaluated on a 100 x 50 grid: strain evenly spaced in [0, 0.6], temperature evenly spaced in [273, 573] K, rows ordered by temperature then strain.",
            "Each entry records the role and range of every sampled constant ('sampling') and the measured quality statistics of the kept draw ('quality').",
        ],
        "constant_ranges": {
            domain: {role: {"low": lo, "high": hi, "unit": unit, "meaning": meaning} for role, (lo, hi, unit, meaning) in roles.items()}
            for domain, roles in RANGES.items()
        },
        "fixed_constants": {k: {"value": v, "unit": u, "meaning": m} for k, (v, u, m) in FIXED.items()},
        "initial_condition_ranges": {
            domain: {k: {"low": lo, "high": hi, "unit": unit} for k, (lo, hi, unit) in ics.items()}
            for domain, ics in INITIAL_CONDITIONS.items()
            if ics
        },
        "solver": dict(ls.SOLVER),
        "quality_thresholds": THRESHOLDS,
        "quality_threshold_notes": THRESHOLD_NOTES,
        "uniqueness": "The paper also rejects solutions too close (by RMSE) to existing ones; every Table 4 row here is a structurally distinct law, so no such check is applied.",
        "split_protocol": (
            "Dynamical tasks: the last 500 of the 5000 time samples are test_ood; the first 4500 are "
            "permuted with numpy.random.default_rng(seed) and split into 4000 train and 500 test_id "
            "(each kept in time order). Material science: the 500 grid points at the five highest "
            "temperatures are test_ood; the other 4500 are split the same way."
        ),
        "conventions": [
            "Templates use Kepler Lab's expression syntax (engine.expr); omega0**2 stands for Table 4's omega_0^2.",
            "Table 4's exponent 0.33 is the printed form of 1/3 (App. D, Fig. 14 shows P^(1/3)); templates use (1/3).",
            "The text rendering of Table 4 dropped absolute-value bars; they are restored as abs(...) and each such row says so in 'repair'.",
            "'repair' is non-empty exactly for rows whose law differs from the printed row; 'notes' holds other remarks.",
        ],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=ls.CATALOG_PATH)
    parser.add_argument("--only", nargs="*", help="build only these laws and print them (no file written)")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    specs = equation_specs()
    assert len(specs) == 129 and set(PAPER_ROWS) == {s["name"] for s in specs}
    if args.only:
        specs = [s for s in specs if s["name"] in set(args.only)]
    start = time.perf_counter()
    entries = [build_entry(spec, verbose=not args.quiet) for spec in specs]
    elapsed = time.perf_counter() - start
    if args.only:
        print(json.dumps(entries, indent=2, ensure_ascii=False))
        return
    catalog = {"header": header(), "entries": entries}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(catalog, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    total = sum(e["attempts"] for e in entries)
    print(f"wrote {len(entries)} laws to {args.output} ({total} draws, {elapsed:.1f} s)")


if __name__ == "__main__":
    main()
