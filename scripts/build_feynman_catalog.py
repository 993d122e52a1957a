#!/usr/bin/env python
"""Build Kepler Lab's Feynman catalog (``assets/catalogs/feynman.json``).

The facts come from the AI Feynman equation table (``FeynmanEquations.csv``; Udrescu &
Tegmark, Science Advances 2020): file name, equation number, output name, formula and a
sampling range for every variable. Everything else in the catalog is written by us, below:
a title, a short scientific context and a description and unit for every variable
(``GLOSSARY`` gives defaults per symbol, ``SPECS`` the per-equation text and overrides).

For every row the script checks that the formula passes the whitelist parser
(:func:`engine.expr.parse`, never ``eval``) with exactly the listed variables as free symbols
(``pi`` is the constant), that every variable is described, and that the app's own generator
(:func:`engine.tasks.feynman.sample_valid`) finds enough valid points in both the training
box and the out-of-domain box. The acceptance rates are recorded per entry.

Rebuilding is deterministic: ``python scripts/build_feynman_catalog.py [--csv PATH]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.expr import parse  # noqa: E402
from engine.tasks import feynman as fy  # noqa: E402

CATALOG_FORMAT = 1
DEFAULT_CSV = ROOT.parent / "shared" / "data" / "feynman" / "FeynmanEquations.csv"
EXPECTED_ROWS = 100

#: Smallest acceptable fraction of sampled points with a finite target, per box. Below it the
#: entry would need its own OOD box (``OOD_OVERRIDES``).
MIN_ACCEPTANCE = 0.05

#: Per-task OOD boxes replacing the default rule: filename -> ({name: (low, high)}, reason).
#: Empty: every task works with the default rule (checked by this script).
OOD_OVERRIDES: dict[str, tuple[dict[str, tuple[float, float]], str]] = {}

#: Notes on rows of the CSV that needed a remark (they are copied into the catalog entries).
ROW_NOTES = {
    "I.18.12": "The CSV's '# variables' column says 2, but the row lists 3 variables (r, F, theta) and the formula uses all 3; we follow the variable list. theta's training range starts at 0.",
    "I.18.14": "The CSV's '# variables' column says 3, but the row lists 4 variables (m, r, v, theta), all used by the formula; we follow the variable list.",
    "I.38.12": "The CSV's '# variables' column says 3, but the row lists 4 variables (m, q, h, epsilon), all used by the formula; we follow the variable list.",
    "II.37.1": "The CSV's '# variables' column says 6, but the row lists 3 variables (mom, B, chi), all used by the formula; we follow the variable list.",
    "III.10.19": "The CSV's '# variables' column says 3, but the row lists 4 variables (mom, Bx, By, Bz), all used by the formula; we follow the variable list.",
    "III.19.51": "The CSV's '# variables' column says 4, but the row lists 5 variables (m, q, h, n, epsilon), all used by the formula; we follow the variable list.",
    "I.30.3": "The out-of-domain box puts theta in (5, 7], which contains the pole at theta = 2 pi (sin(theta/2) = 0): the OOD targets are finite but reach very large values near it.",
    "I.26.2": "The out-of-domain box lets n sin(theta2) exceed 1 in magnitude, where arcsin is undefined; such points are rejected and redrawn (see ood_acceptance).",
    "II.6.15a": "As in the CSV, r is an independent input and is not constrained to equal sqrt(x^2 + y^2 + z^2).",
    "II.11.28": "The CSV names the output 'theta'; it is the relative permittivity. We keep the CSV's name as the target.",
    "I.13.4": "Equation number 9, listed in the CSV after I.12.11 (number 13); we keep the CSV's row order.",
}

# fmt: off
_C = " (a physical constant, given as an input variable in the Feynman set)"

#: Default description and unit of a variable name; entries override them where the same
#: symbol means something else.
GLOSSARY: dict[str, tuple[str, str]] = {
    "G": ("Gravitational constant" + _C, "N·m²/kg²"),
    "c": ("Speed of light" + _C, "m/s"),
    "h": ("Planck constant" + _C + "; the equation uses the reduced constant h/(2π)", "J·s"),
    "kb": ("Boltzmann constant" + _C, "J/K"),
    "epsilon": ("Vacuum permittivity (electric constant)" + _C, "F/m"),
    "g": ("Gravitational acceleration near the Earth's surface" + _C, "m/s²"),
    "q": ("Electric charge of the particle", "C"),
    "q1": ("Electric charge of the first particle", "C"),
    "q2": ("Electric charge of the second particle", "C"),
    "m": ("Mass of the particle", "kg"),
    "m1": ("Mass of the first body", "kg"),
    "m2": ("Mass of the second body", "kg"),
    "m_0": ("Rest mass of the particle", "kg"),
    "v": ("Speed of the particle", "m/s"),
    "u": ("Speed of the moving reference frame", "m/s"),
    "T": ("Absolute temperature", "K"),
    "V": ("Volume of the gas", "m³"),
    "pr": ("Pressure of the gas", "Pa"),
    "r": ("Distance from the source", "m"),
    "omega": ("Angular frequency", "rad/s"),
    "omega_0": ("Natural (resonant) angular frequency", "rad/s"),
    "Ef": ("Electric field strength", "V/m"),
    "B": ("Magnetic flux density", "T"),
    "mom": ("Magnetic dipole moment", "A·m²"),
    "p_d": ("Electric dipole moment", "C·m"),
    "t": ("Time", "s"),
    "d": ("Distance", "m"),
    "A": ("Cross-sectional area", "m²"),
    "Volt": ("Voltage (electric potential difference)", "V"),
    "Gamma": ("Adiabatic index (ratio of the specific heats) of the gas", "dimensionless"),
    "chi": ("Magnetic susceptibility of the material", "dimensionless"),
    "rho_c_0": ("Charge density measured in the rest frame of the charges", "C/m³"),
    "n_rho": ("Number density of the dipoles", "1/m³"),
    "E_n": ("Energy", "J"),
    "theta": ("Angle", "rad"),
    "x": ("Position", "m"),
    "x1": ("x coordinate of the first point", "m"),
    "x2": ("x coordinate of the second point", "m"),
    "y1": ("y coordinate of the first point", "m"),
    "y2": ("y coordinate of the second point", "m"),
    "z1": ("z coordinate of the first point", "m"),
    "z2": ("z coordinate of the second point", "m"),
    "r1": ("Position of the first body", "m"),
    "r2": ("Position of the second body", "m"),
    "T1": ("Temperature of the colder face", "K"),
    "T2": ("Temperature of the warmer face", "K"),
    "V1": ("Initial volume of the gas", "m³"),
    "V2": ("Final volume of the gas", "m³"),
    "n_0": ("Number density at the reference point", "1/m³"),
    "g_": ("Landé g-factor", "dimensionless"),
    "k": ("Wave number", "rad/m"),
    "Y": ("Young's modulus of the material", "Pa"),
}

SPECS: dict[str, dict] = {}


def E(filename: str, title: str, context: str, out: tuple[str, str], **variables: tuple[str, str]) -> None:
    SPECS[filename] = {"title": title, "context": context, "output": out, "variables": variables}


# ----------------------------------------------------------------------------- volume I
E("I.6.2a", "Standard normal density",
  "Probability density of a quantity that fluctuates randomly around zero with unit spread, the bell-shaped curve met throughout statistics and the kinetic theory of gases.",
  ("Probability density at theta", "dimensionless"),
  theta=("Value of the normally distributed quantity, in units of its standard deviation", "dimensionless"))
E("I.6.2", "Normal density with a given spread",
  "Probability density of a random quantity centred on zero whose spread is set by its standard deviation.",
  ("Probability density at theta", "1/(unit of theta)"),
  sigma=("Standard deviation of the distribution", "same unit as theta"),
  theta=("Value of the random quantity", "arbitrary unit"))
E("I.6.2b", "Shifted normal density",
  "Probability density of a random quantity distributed normally around a mean value with a given standard deviation.",
  ("Probability density at theta", "1/(unit of theta)"),
  sigma=("Standard deviation of the distribution", "same unit as theta"),
  theta=("Value of the random quantity", "arbitrary unit"),
  theta1=("Mean of the distribution", "same unit as theta"))
E("I.8.14", "Distance between two points in a plane",
  "Euclidean distance between two points given by their Cartesian coordinates in a plane.",
  ("Distance between the two points", "m"))
E("I.9.18", "Gravitational force between two masses",
  "Magnitude of Newton's gravitational attraction between two point masses located at two points in space given by their Cartesian coordinates.",
  ("Magnitude of the gravitational force", "N"))
E("I.10.7", "Relativistic mass",
  "Apparent (relativistic) mass of a particle moving at a speed comparable to that of light, in special relativity.",
  ("Relativistic mass of the moving particle", "kg"))
E("I.11.19", "Dot product of two vectors",
  "Scalar product of two three-dimensional vectors given by their Cartesian components, as used for work or projections.",
  ("Scalar product of the two vectors", "product of the components' units"),
  x1=("x component of the first vector", "arbitrary unit"), x2=("y component of the first vector", "arbitrary unit"),
  x3=("z component of the first vector", "arbitrary unit"), y1=("x component of the second vector", "arbitrary unit"),
  y2=("y component of the second vector", "arbitrary unit"), y3=("z component of the second vector", "arbitrary unit"))
E("I.12.1", "Sliding friction",
  "Kinetic friction force on a block sliding over a surface, in the simple empirical model of dry friction.",
  ("Friction force", "N"),
  mu=("Coefficient of kinetic friction", "dimensionless"), Nn=("Normal force pressing the surfaces together", "N"))
E("I.12.2", "Electrostatic force between two point charges",
  "Magnitude of the electric force between two stationary point charges separated by a distance in vacuum.",
  ("Magnitude of the electrostatic force", "N"),
  r=("Distance between the charges", "m"))
E("I.12.4", "Electric field of a point charge",
  "Magnitude of the electric field produced by a stationary point charge at a given distance in vacuum.",
  ("Electric field strength", "V/m"),
  q1=("Electric charge of the source", "C"), r=("Distance from the charge", "m"))
E("I.12.5", "Electric force on a charge in a field",
  "Force exerted by an electric field on a test charge placed in it.",
  ("Electric force on the charge", "N"),
  q2=("Electric charge of the test particle", "C"))
E("I.12.11", "Lorentz force",
  "Force on a charged particle moving through combined electric and magnetic fields, with the velocity at an angle to the magnetic field.",
  ("Magnitude of the force on the particle", "N"),
  theta=("Angle between the velocity and the magnetic field", "rad"))
E("I.13.4", "Kinetic energy in three dimensions",
  "Kinetic energy of a point mass moving in three dimensions, given its velocity components.",
  ("Kinetic energy", "J"),
  v=("x component of the velocity", "m/s"), u=("y component of the velocity", "m/s"), w=("z component of the velocity", "m/s"))
E("I.13.12", "Change in gravitational potential energy",
  "Change in gravitational potential energy of two masses when their separation changes from one distance to another.",
  ("Change in potential energy", "J"),
  r1=("Initial separation of the masses", "m"), r2=("Final separation of the masses", "m"))
E("I.14.3", "Gravitational potential energy near the ground",
  "Potential energy of a mass lifted to some height in the uniform gravitational field near the Earth's surface.",
  ("Potential energy", "J"),
  z=("Height above the reference level", "m"))
E("I.14.4", "Elastic energy of a spring",
  "Energy stored in an ideal spring stretched or compressed from its rest length.",
  ("Stored elastic energy", "J"),
  k_spring=("Spring constant (stiffness)", "N/m"), x=("Extension of the spring from its rest length", "m"))
E("I.15.3x", "Lorentz transformation of position",
  "Position of an event as seen from a frame moving at constant velocity along the x axis, in special relativity.",
  ("Position of the event in the moving frame", "m"),
  x=("Position of the event in the rest frame", "m"), t=("Time of the event in the rest frame", "s"))
E("I.15.3t", "Lorentz transformation of time",
  "Time of an event as seen from a frame moving at constant velocity along the x axis, in special relativity.",
  ("Time of the event in the moving frame", "s"),
  x=("Position of the event in the rest frame", "m"), t=("Time of the event in the rest frame", "s"))
E("I.15.1", "Relativistic momentum",
  "Momentum of a particle moving at a speed comparable to that of light, in special relativity.",
  ("Relativistic momentum", "kg·m/s"))
E("I.16.6", "Relativistic addition of velocities",
  "Speed of an object measured from one frame when it moves inside another frame that itself moves in the same direction, in special relativity.",
  ("Combined speed seen from the first frame", "m/s"),
  v=("Speed of the object in the moving frame", "m/s"), u=("Speed of the moving frame", "m/s"))
E("I.18.4", "Centre of mass of two bodies",
  "Position of the centre of mass of two point masses on a line.",
  ("Position of the centre of mass", "m"))
E("I.18.12", "Torque of a force",
  "Magnitude of the torque produced by a force applied at a distance from a pivot, at an angle to the lever arm.",
  ("Magnitude of the torque", "N·m"),
  r=("Length of the lever arm", "m"), F=("Magnitude of the applied force", "N"),
  theta=("Angle between the lever arm and the force", "rad"))
E("I.18.14", "Angular momentum of a moving particle",
  "Magnitude of the angular momentum about a point of a particle moving past it, with its velocity at an angle to the position vector.",
  ("Magnitude of the angular momentum", "kg·m²/s"),
  r=("Distance of the particle from the reference point", "m"),
  theta=("Angle between the position vector and the velocity", "rad"))
E("I.24.6", "Energy of a driven mass on a spring",
  "Time-averaged energy of a mass on an ideal spring that is driven at a frequency different from its natural frequency.",
  ("Average energy of the driven system", "J"),
  omega=("Angular frequency of the driving force", "rad/s"),
  x=("Amplitude of the oscillation", "m"))
E("I.25.13", "Voltage across a capacitor",
  "Potential difference across the plates of a capacitor that holds a given charge.",
  ("Voltage across the capacitor", "V"),
  q=("Charge on the capacitor", "C"), C=("Capacitance", "F"))
E("I.26.2", "Refraction at an interface",
  "Angle of a light ray on one side of a flat interface between two transparent media, given the angle on the other side and the ratio of their refractive indices.",
  ("Angle of the ray to the normal in the first medium", "rad"),
  n=("Ratio of the refractive indices of the two media", "dimensionless"),
  theta2=("Angle of the ray to the normal in the second medium", "rad"))
E("I.27.6", "Focal length of a refracting surface",
  "Focal distance of a single curved refracting surface in the thin-lens picture of geometrical optics, from the object and image distances and the refractive index.",
  ("Focal length", "m"),
  d1=("Distance on the object side", "m"), d2=("Distance on the image side", "m"),
  n=("Refractive index", "dimensionless"))
E("I.29.4", "Wave number of a wave",
  "Wave number of a harmonic wave travelling with a given phase speed at a given frequency.",
  ("Wave number", "rad/m"),
  omega=("Angular frequency of the wave", "rad/s"), c=("Phase speed of the wave", "m/s"))
E("I.29.16", "Adding two vectors of given lengths and directions",
  "Length of the sum of two planar vectors (e.g. the amplitudes of two interfering waves) given their lengths and directions.",
  ("Length of the resulting vector", "arbitrary unit"),
  x1=("Length of the first vector", "arbitrary unit"), x2=("Length of the second vector", "arbitrary unit"),
  theta1=("Direction (phase) of the first vector", "rad"), theta2=("Direction (phase) of the second vector", "rad"))
E("I.30.3", "Intensity behind a diffraction grating",
  "Intensity pattern far from a row of equally spaced coherent sources (an idealised diffraction grating) as a function of the phase difference between neighbouring sources.",
  ("Intensity in the given direction", "W/m²"),
  Int_0=("Intensity produced by a single source", "W/m²"),
  theta=("Phase difference between neighbouring sources", "rad"),
  n=("Number of sources", "dimensionless"))
E("I.30.5", "Direction of a grating maximum",
  "Angle of the first intensity maximum behind a set of equally spaced slits or sources, for light of a given wavelength.",
  ("Angle of the maximum from the normal", "rad"),
  lambd=("Wavelength of the light", "m"), d=("Spacing between neighbouring slits", "m"),
  n=("Number of slits", "dimensionless"))
E("I.32.5", "Power radiated by an accelerated charge",
  "Total power radiated as electromagnetic waves by a non-relativistic charge that is being accelerated.",
  ("Radiated power", "W"),
  a=("Acceleration of the charge", "m/s²"))
E("I.32.17", "Light scattered by a bound electron",
  "Power scattered by an electron bound in an atom (modelled as an elastically bound charge) when a light wave drives it below or above its resonance.",
  ("Scattered power", "W"),
  Ef=("Amplitude of the incident electric field", "V/m"),
  r=("Classical radius of the scattering charge", "m"),
  omega=("Angular frequency of the incident light", "rad/s"),
  omega_0=("Resonant angular frequency of the bound electron", "rad/s"))
E("I.34.8", "Cyclotron frequency",
  "Angular frequency with which a charged particle circles in a uniform magnetic field.",
  ("Angular frequency of the circular motion", "rad/s"),
  p=("Momentum of the particle", "kg·m/s"))
E("I.34.1", "Doppler shift from a moving source",
  "Frequency observed from a source that approaches the observer, in the non-relativistic Doppler effect for waves travelling at a fixed speed.",
  ("Observed angular frequency", "rad/s"),
  c=("Speed of the waves", "m/s"), v=("Speed of the source towards the observer", "m/s"),
  omega_0=("Angular frequency emitted by the source", "rad/s"))
E("I.34.14", "Relativistic Doppler shift",
  "Frequency of light observed from a source that moves directly towards the observer, including the time dilation of special relativity.",
  ("Observed angular frequency", "rad/s"),
  v=("Speed of the source towards the observer", "m/s"),
  omega_0=("Angular frequency in the source's rest frame", "rad/s"))
E("I.34.27", "Energy of a photon",
  "Energy carried by one quantum of light of a given angular frequency.",
  ("Photon energy", "J"))
E("I.37.4", "Interference of two waves",
  "Intensity where two coherent waves of given intensities overlap with a given phase difference.",
  ("Resulting intensity", "W/m²"),
  I1=("Intensity of the first wave", "W/m²"), I2=("Intensity of the second wave", "W/m²"),
  delta=("Phase difference between the waves", "rad"))
E("I.38.12", "Bohr radius",
  "Size of the ground state of a hydrogen-like atom estimated from the balance between the electric attraction and the uncertainty principle.",
  ("Radius of the atom", "m"),
  m=("Mass of the electron", "kg"), q=("Elementary charge", "C"))
E("I.39.1", "Energy of an ideal monatomic gas",
  "Internal (kinetic) energy of an ideal monatomic gas of given pressure and volume.",
  ("Internal energy of the gas", "J"))
E("I.39.11", "Energy of an ideal gas with adiabatic index",
  "Internal energy of an ideal gas in terms of its pressure, volume and ratio of specific heats.",
  ("Internal energy of the gas", "J"))
E("I.39.22", "Ideal gas law",
  "Pressure of an ideal gas of a given number of molecules at a given temperature and volume.",
  ("Pressure of the gas", "Pa"),
  n=("Number of molecules", "dimensionless"))
E("I.40.1", "Barometric density profile",
  "Number density of molecules at a height in an isothermal atmosphere held by uniform gravity, as given by the Boltzmann distribution.",
  ("Number density at height x", "1/m³"),
  n_0=("Number density at height zero", "1/m³"), m=("Mass of one molecule", "kg"),
  x=("Height above the reference level", "m"))
E("I.41.16", "Black-body spectral radiance",
  "Intensity of thermal radiation per unit frequency emitted by a black body at a given temperature.",
  ("Spectral intensity of the radiation", "J/m²"),
  omega=("Angular frequency of the radiation", "rad/s"), T=("Temperature of the black body", "K"))
E("I.43.16", "Drift velocity of charge carriers",
  "Average drift speed of charged particles pushed through a medium by a uniform electric field, in the mobility picture of conduction.",
  ("Drift velocity", "m/s"),
  mu_drift=("Mobility of the particles (drift velocity per unit force)", "s/kg"),
  Volt=("Voltage across the medium", "V"), d=("Length of the medium along the field", "m"))
E("I.43.31", "Einstein relation for diffusion",
  "Diffusion coefficient of a particle in a fluid in terms of its mobility and the temperature.",
  ("Diffusion coefficient", "m²/s"),
  mob=("Mobility of the particle (drift velocity per unit force)", "s/kg"))
E("I.43.43", "Thermal conductivity of a gas",
  "Thermal conductivity of a dilute gas from kinetic theory, in terms of the molecular speed, the collision cross-section and the heat capacity.",
  ("Thermal conductivity", "W/(m·K)"),
  A=("Collision cross-section of a molecule", "m²"), v=("Mean molecular speed", "m/s"))
E("I.44.4", "Work of an isothermal expansion",
  "Energy delivered (as work, equal to the heat absorbed) when an ideal gas expands isothermally from one volume to another.",
  ("Energy transferred in the expansion", "J"),
  n=("Number of molecules", "dimensionless"))
E("I.47.23", "Speed of sound in a gas",
  "Speed of sound waves in an ideal gas, where compressions happen adiabatically.",
  ("Speed of sound", "m/s"),
  rho=("Mass density of the gas", "kg/m³"))
E("I.48.2", "Relativistic energy",
  "Total energy of a particle moving at a speed comparable to that of light, including its rest energy.",
  ("Total energy of the particle", "J"))
E("I.50.26", "Anharmonic response to a cosine drive",
  "Output of a weakly nonlinear system driven by a harmonic signal, which generates a second harmonic besides the driving frequency.",
  ("Response of the system", "arbitrary unit"),
  x1=("Amplitude of the driving signal", "arbitrary unit"), omega=("Angular frequency of the drive", "rad/s"),
  alpha=("Strength of the quadratic nonlinearity", "1/(unit of x1)"))

# ----------------------------------------------------------------------------- volume II
E("II.2.42", "Heat conduction through a slab",
  "Rate of heat flow through a flat slab whose two faces are held at different temperatures.",
  ("Heat flow rate", "W"),
  kappa=("Thermal conductivity of the slab", "W/(m·K)"), A=("Area of the slab", "m²"),
  d=("Thickness of the slab", "m"))
E("II.3.24", "Flux from an isotropic source",
  "Energy flux at a distance from a point source radiating equally in all directions.",
  ("Energy flux", "W/m²"),
  Pwr=("Total power emitted by the source", "W"))
E("II.4.23", "Potential of a point charge",
  "Electrostatic potential at a distance from a point charge in vacuum.",
  ("Electric potential", "V"),
  r=("Distance from the charge", "m"))
E("II.6.11", "Potential of an electric dipole",
  "Electrostatic potential far from a small electric dipole, in a direction at an angle to the dipole axis.",
  ("Electric potential", "V"),
  theta=("Angle between the dipole axis and the direction of the field point", "rad"),
  r=("Distance from the dipole", "m"))
E("II.6.15a", "Transverse field of a dipole (Cartesian)",
  "Component of the electric field of a small dipole pointing along z that is perpendicular to the dipole axis, at a field point given by its coordinates. In the Feynman set the distance r is an independent input and is not tied to x, y and z.",
  ("Transverse electric field component", "V/m"),
  r=("Distance from the dipole to the field point", "m"),
  x=("x coordinate of the field point", "m"), y=("y coordinate of the field point", "m"),
  z=("z coordinate of the field point (along the dipole)", "m"))
E("II.6.15b", "Transverse field of a dipole (polar)",
  "Component of the electric field of a small dipole perpendicular to the dipole axis, at a distance and angle from it.",
  ("Transverse electric field component", "V/m"),
  theta=("Angle between the dipole axis and the direction of the field point", "rad"),
  r=("Distance from the dipole", "m"))
E("II.8.7", "Electrostatic energy of a charged sphere",
  "Energy needed to assemble a uniformly charged sphere from charges brought in from infinity.",
  ("Electrostatic energy", "J"),
  q=("Total charge of the sphere", "C"), d=("Radius of the sphere", "m"))
E("II.8.31", "Energy density of an electric field",
  "Energy stored per unit volume in an electrostatic field in vacuum.",
  ("Energy density", "J/m³"))
E("II.10.9", "Field inside a dielectric",
  "Electric field between charged plates when the gap is filled with a dielectric of given susceptibility.",
  ("Electric field in the dielectric", "V/m"),
  sigma_den=("Surface charge density on the plates", "C/m²"),
  chi=("Electric susceptibility of the dielectric", "dimensionless"))
E("II.11.3", "Displacement of a driven bound electron",
  "Amplitude of the displacement of an electron bound elastically to an atom when an oscillating electric field drives it away from resonance.",
  ("Displacement amplitude", "m"),
  Ef=("Amplitude of the driving electric field", "V/m"),
  omega=("Angular frequency of the driving field", "rad/s"))
E("II.11.17", "Density of polar molecules in a field",
  "Number density of polar molecules whose dipoles point at a given angle to an applied electric field, to first order in the field, from the Boltzmann distribution.",
  ("Number density at angle theta", "1/m³"),
  n_0=("Number density without the field", "1/m³"),
  theta=("Angle between the dipole and the field", "rad"))
E("II.11.20", "Orientation polarisation",
  "Polarisation of a gas of polar molecules in a weak electric field, where thermal agitation opposes the alignment of the dipoles.",
  ("Polarisation (dipole moment per unit volume)", "C/m²"),
  n_rho=("Number density of the molecules", "1/m³"))
E("II.11.27", "Polarisation of a dense dielectric",
  "Polarisation of a dense dielectric when the local field acting on each atom includes the field of its polarised neighbours (Clausius-Mossotti picture).",
  ("Polarisation", "C/m²"),
  n=("Number density of the atoms (scaled)", "1/m³"),
  alpha=("Atomic polarisability (scaled)", "m³"))
E("II.11.28", "Dielectric constant of a dense material",
  "Relative permittivity of a dense dielectric from the number density and polarisability of its atoms, including the local-field correction. The Feynman set names this output theta.",
  ("Relative permittivity (dielectric constant)", "dimensionless"),
  n=("Number density of the atoms (scaled)", "1/m³"),
  alpha=("Atomic polarisability (scaled)", "m³"))
E("II.13.17", "Magnetic field of a straight wire",
  "Magnetic field at a distance from a long straight wire carrying a steady current.",
  ("Magnetic flux density", "T"),
  I=("Current in the wire", "A"), r=("Distance from the wire", "m"))
E("II.13.23", "Charge density of a moving distribution",
  "Charge density seen in a frame where a distribution of charges moves at a relativistic speed (length contraction).",
  ("Charge density in the moving frame", "C/m³"))
E("II.13.34", "Current density of a moving charge distribution",
  "Current density carried by a distribution of charges moving at a relativistic speed.",
  ("Current density", "A/m²"))
E("II.15.4", "Energy of a magnetic dipole in a field",
  "Potential energy of a magnetic moment in a uniform magnetic field, at an angle to it.",
  ("Potential energy", "J"),
  theta=("Angle between the moment and the field", "rad"))
E("II.15.5", "Energy of an electric dipole in a field",
  "Potential energy of an electric dipole in a uniform electric field, at an angle to it.",
  ("Potential energy", "J"),
  theta=("Angle between the dipole and the field", "rad"))
E("II.21.32", "Potential of a moving point charge",
  "Retarded (Liénard-Wiechert) scalar potential of a point charge moving directly towards the observer.",
  ("Electric potential", "V"),
  r=("Distance from the charge at the retarded time", "m"), v=("Speed of the charge towards the observer", "m/s"))
E("II.24.17", "Wave number in a waveguide",
  "Propagation constant of the lowest mode of an electromagnetic wave travelling along a rectangular waveguide.",
  ("Wave number along the guide", "rad/m"),
  omega=("Angular frequency of the wave", "rad/s"), d=("Width of the waveguide", "m"))
E("II.27.16", "Energy flux of an electromagnetic wave",
  "Energy flow per unit area and time (Poynting flux) of a plane electromagnetic wave in vacuum.",
  ("Energy flux", "W/m²"))
E("II.27.18", "Energy density of an electromagnetic wave",
  "Energy stored per unit volume in a plane electromagnetic wave in vacuum, counting the electric and magnetic contributions.",
  ("Energy density", "J/m³"))
E("II.34.2a", "Current of a circulating charge",
  "Average electric current produced by a charge travelling around a circular orbit.",
  ("Current", "A"),
  v=("Speed of the charge", "m/s"), r=("Radius of the orbit", "m"))
E("II.34.2", "Magnetic moment of a circulating charge",
  "Magnetic moment of a charge moving on a circular orbit, seen as a current loop.",
  ("Magnetic moment", "A·m²"),
  v=("Speed of the charge", "m/s"), r=("Radius of the orbit", "m"))
E("II.34.11", "Larmor precession frequency",
  "Angular frequency at which the magnetic moment of a particle with spin precesses in a magnetic field.",
  ("Precession angular frequency", "rad/s"))
E("II.34.29a", "Bohr magneton",
  "Natural unit of the magnetic moment of a particle of given charge and mass, set by quantum mechanics.",
  ("Magnetic moment", "A·m²"))
E("II.34.29b", "Zeeman energy",
  "Energy shift of an atomic state in a magnetic field, given the component of its angular momentum along the field.",
  ("Energy shift", "J"),
  mom=("Magnetic moment unit of the particle (magneton)", "A·m²"),
  Jz=("Component of the angular momentum along the field", "J·s"))
E("II.35.18", "Spin populations in a magnetic field",
  "Number density of two-state magnetic moments in one orientation, when thermal equilibrium in a magnetic field splits the population between the two orientations.",
  ("Number density in one orientation", "1/m³"),
  n_0=("Total number density of the moments", "1/m³"))
E("II.35.21", "Magnetisation of a paramagnet",
  "Magnetisation of a gas of two-state magnetic moments in thermal equilibrium with a magnetic field, valid for any field strength.",
  ("Magnetisation", "A/m"),
  n_rho=("Number density of the moments", "1/m³"))
E("II.36.38", "Local field energy ratio in a ferromagnet",
  "Ratio of magnetic to thermal energy of a moment in a magnetised material, where the field acting on each moment includes a mean-field contribution proportional to the magnetisation.",
  ("Ratio of magnetic to thermal energy", "dimensionless"),
  H=("Applied magnetising field", "A/m"),
  alpha=("Mean-field (Weiss) coupling coefficient", "dimensionless"),
  M=("Magnetisation of the material", "A/m"))
E("II.37.1", "Energy of a moment in a magnetisable medium",
  "Energy of a magnetic moment in a material whose susceptibility enhances the applied field.",
  ("Energy of the moment", "J"))
E("II.38.3", "Elastic force on a stretched bar",
  "Force needed to stretch a bar of given cross-section and length by a small amount (Hooke's law for solids).",
  ("Tension force", "N"),
  A=("Cross-sectional area of the bar", "m²"), d=("Length of the bar", "m"),
  x=("Elongation of the bar", "m"))
E("II.38.14", "Shear modulus of an isotropic solid",
  "Shear modulus of an isotropic elastic material from its Young's modulus and Poisson's ratio.",
  ("Shear modulus", "Pa"),
  sigma=("Poisson's ratio", "dimensionless"))

# ----------------------------------------------------------------------------- volume III
E("III.4.32", "Bose-Einstein occupation number",
  "Mean number of quanta (photons or phonons) in one vibrational mode of given frequency at thermal equilibrium.",
  ("Mean occupation number", "dimensionless"))
E("III.4.33", "Mean energy of a quantised vibrational mode",
  "Average thermal energy (above the ground state) of one quantised harmonic vibrational mode of given frequency at a given temperature.",
  ("Mean thermal energy", "J"))
E("III.7.38", "Spin precession frequency",
  "Angular frequency with which the spin of a magnetic particle precesses in a magnetic field, from the energy splitting of its two states.",
  ("Precession angular frequency", "rad/s"))
E("III.8.54", "Transition probability of a two-state system",
  "Probability of finding a two-state quantum system in the other state after a given time, when the coupling between the states sets an energy scale.",
  ("Transition probability", "dimensionless"),
  E_n=("Coupling energy between the two states", "J"))
E("III.9.52", "Transition probability under a periodic perturbation",
  "Probability of a transition in a quantum system (e.g. a molecule driven by light) after a time, when an oscillating electric field drives it near resonance; first-order perturbation theory.",
  ("Transition probability (per unit of the coupling prefactor)", "dimensionless"),
  Ef=("Amplitude of the oscillating electric field", "V/m"),
  omega=("Angular frequency of the perturbation", "rad/s"),
  omega_0=("Angular frequency of the transition", "rad/s"))
E("III.10.19", "Energy of a moment in a field of arbitrary direction",
  "Energy splitting of a magnetic moment in a magnetic field given by its three Cartesian components.",
  ("Energy", "J"),
  Bx=("x component of the magnetic field", "T"), By=("y component of the magnetic field", "T"),
  Bz=("z component of the magnetic field", "T"))
E("III.12.43", "Quantised angular momentum",
  "Angular momentum carried by a quantum state with a given quantum number.",
  ("Angular momentum", "J·s"),
  n=("Angular momentum quantum number", "dimensionless"))
E("III.13.18", "Group velocity on a crystal lattice",
  "Speed of an electron wave packet moving along a one-dimensional crystal lattice in the tight-binding picture, at small wave number.",
  ("Group velocity", "m/s"),
  E_n=("Hopping (coupling) energy between neighbouring sites", "J"),
  d=("Lattice spacing", "m"), k=("Wave number of the electron", "rad/m"))
E("III.14.14", "Current through a diode",
  "Current through a p-n junction diode under a forward voltage.",
  ("Current through the diode", "A"),
  I_0=("Saturation current of the junction", "A"), q=("Elementary charge", "C"))
E("III.15.12", "Energy band of a one-dimensional lattice",
  "Energy of an electron state on a one-dimensional crystal lattice as a function of its wave number, in the tight-binding picture.",
  ("Energy of the state", "J"),
  U=("Hopping (coupling) energy between neighbouring sites", "J"),
  k=("Wave number of the electron", "rad/m"), d=("Lattice spacing", "m"))
E("III.15.14", "Effective mass on a lattice",
  "Effective mass of an electron moving near the bottom of the energy band of a one-dimensional crystal lattice.",
  ("Effective mass", "kg"),
  E_n=("Hopping (coupling) energy between neighbouring sites", "J"), d=("Lattice spacing", "m"))
E("III.15.27", "Allowed wave numbers on a ring lattice",
  "Wave number of an electron state on a lattice of finitely many sites closed on itself, where periodicity allows only discrete values.",
  ("Wave number", "rad/m"),
  alpha=("Integer labelling the state", "dimensionless"), n=("Number of sites in the ring", "dimensionless"),
  d=("Lattice spacing", "m"))
E("III.17.37", "Angular distribution of a decay",
  "Rate of emission of a decay product as a function of its angle to a preferred axis (e.g. a polarisation direction).",
  ("Emission rate in direction theta", "1/s"),
  beta=("Angle-averaged emission rate", "1/s"), alpha=("Asymmetry coefficient", "dimensionless"),
  theta=("Angle between the emission direction and the axis", "rad"))
E("III.19.51", "Energy levels of hydrogen",
  "Binding energy of the bound states of the hydrogen atom, labelled by the principal quantum number.",
  ("Energy of the level", "J"),
  m=("Mass of the electron", "kg"), q=("Elementary charge", "C"),
  n=("Principal quantum number", "dimensionless"))
E("III.21.20", "Current density from a vector potential",
  "Electric current density of a charged quantum fluid (e.g. a superconductor) in a magnetic vector potential, in the London picture.",
  ("Current density", "A/m²"),
  rho_c_0=("Charge density of the fluid", "C/m³"),
  A_vec=("Magnetic vector potential", "T·m"),
  m=("Mass of a charge carrier", "kg"))
# fmt: on

_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "theta", "kappa", "lambda", "mu", "rho",
    "sigma", "tau", "chi", "omega", "Gamma",
}
_LATEX_NAMES = {
    "kb": r"k_B", "lambd": r"\lambda", "h": "h", "Nn": r"N", "pr": "p", "mom": r"\mu",
    "p_d": r"p_d", "Ef": "E", "Volt": "V", "Int": "I", "Int_0": "I_0", "Pwr": "P", "foc": "f",
    "E_n": "E", "E_den": "u", "rho_c_0": r"\rho_{c,0}", "rho_c": r"\rho_c", "n_rho": r"n_\rho",
    "sigma_den": r"\sigma_s", "mu_drift": r"\mu_d", "mob": r"\mu", "k_spring": "k", "g_": "g",
    "A_vec": "A", "mu_S": r"\mu_S", "L_rad": "L", "prob": "P", "Pol": "P", "flux": "S",
}


def latex_of(name: str) -> str:
    """A display symbol for a CSV variable name (theta1 -> \\theta_{1}, omega_0 -> \\omega_{0})."""
    if name in _LATEX_NAMES:
        return _LATEX_NAMES[name]
    m = re.fullmatch(r"([A-Za-z]+?)_?(\d+|[a-z])?", name)
    base, sub = (m.group(1), m.group(2)) if m else (name, None)
    if base not in _GREEK and m and m.group(2) and len(name) > 1 and not name[-1].isdigit() and "_" not in name:
        base, sub = name, None
    tex = "\\" + base if base in _GREEK else base
    return f"{tex}_{{{sub}}}" if sub else tex


def read_rows(path: Path) -> tuple[list[dict], int]:
    """The CSV's equation rows (blank rows dropped) and the number of blank rows seen."""
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    blank = [r for r in rows if not (r.get("Filename") or "").strip()]
    return [r for r in rows if (r.get("Filename") or "").strip()], len(blank)


def _num(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


def describe(name: str, spec: dict, role: str) -> dict:
    if role == "target":
        desc, unit = spec["output"]
    else:
        if name in spec["variables"]:
            desc, unit = spec["variables"][name]
        elif name in GLOSSARY:
            desc, unit = GLOSSARY[name]
        else:
            raise SystemExit(f"no description for variable {name}")
    return {"name": name, "description": desc, "unit": unit, "latex": latex_of(name)}


def build_entry(row: dict) -> dict:
    filename = row["Filename"].strip()
    spec = SPECS[filename]
    names = [row[f"v{i}_name"].strip() for i in range(1, 11) if (row.get(f"v{i}_name") or "").strip()]
    unknown = set(spec["variables"]) - set(names)
    if unknown:
        raise SystemExit(f"{filename}: descriptions for variables not in the row: {sorted(unknown)}")
    formula = row["Formula"].strip()
    expr = parse(formula, names)  # whitelist parser; raises on anything else
    free = {s.name for s in expr.free_symbols}
    if free != set(names):
        raise SystemExit(f"{filename}: free symbols {sorted(free)} != variables {sorted(names)}")
    output = row["Output"].strip()
    if output in names:
        raise SystemExit(f"{filename}: output {output} is also an input")
    inputs = []
    for i, name in enumerate(names, start=1):
        low, high = _num(row[f"v{i}_low"]), _num(row[f"v{i}_high"])
        if not low < high:
            raise SystemExit(f"{filename}: empty range for {name}")
        inputs.append({**describe(name, spec, "input"), "low": low, "high": high})
    volume = filename.split(".", 1)[0]
    assert volume in ("I", "II", "III"), filename
    entry = {
        "filename": filename,
        "number": int(row["Number"]),
        "volume": volume,
        "title": spec["title"],
        "context": spec["context"],
        "formula": formula,
        "output": describe(output, spec, "target"),
        "inputs": inputs,
        "csv_variable_count": int(row["# variables"]),
        "seed": zlib.crc32(filename.encode()),
        "notes": ROW_NOTES.get(filename, ""),
    }
    if filename in OOD_OVERRIDES:
        ranges, reason = OOD_OVERRIDES[filename]
        entry["ood"] = {"rule": "custom", "ranges": {k: list(v) for k, v in ranges.items()}, "reason": reason}
    else:
        entry["ood"] = {"rule": "above"}
    entry["quality"] = check_sampling(entry)
    return entry


def check_sampling(entry: dict) -> dict:
    """Acceptance rate of the rejection sampler in each box, with the app's own generator."""
    f = fy.target_function(entry)
    seed = int(entry["seed"])
    out = {}
    for key, box, n, stream, open_low in (
        ("id_acceptance", fy.train_ranges(entry), fy.N_TRAIN + fy.N_TEST_ID, 0, False),
        ("ood_acceptance", fy.ood_ranges(entry), fy.N_TEST_OOD, 1, True),
    ):
        _, y, drawn = fy.sample_valid(f, np.random.default_rng([seed, stream]), box, n, open_low=open_low)
        # Acceptance measured on a fixed-size probe so it does not depend on batch sizes.
        probe = np.random.default_rng([seed, 99])
        lo = np.array([b[0] for b in box]); hi = np.array([b[1] for b in box])
        X = lo + probe.random((20000, len(box))) * (hi - lo)
        rate = float(np.mean(np.isfinite(np.asarray(f(X), dtype=float))))
        if rate < MIN_ACCEPTANCE:
            raise SystemExit(f"{entry['filename']}: only {rate:.1%} of the {key[:-11]} box is valid")
        out[key] = round(rate, 4)
        out[key.replace("acceptance", "max_abs_target")] = float(f"{np.max(np.abs(y)):.4g}")
    return out


def header(csv_path: Path, blank_rows: int) -> dict:
    return {
        "format": CATALOG_FORMAT,
        "suite": fy.SUITE,
        "title": "The AI Feynman database: 100 equations from the Feynman Lectures on Physics",
        "source": "S.-M. Udrescu, M. Tegmark. AI Feynman: a physics-inspired method for symbolic regression. Science Advances 6, eaay2631 (2020). Table: FeynmanEquations.csv (Filename, Number, Output, Formula, # variables, v*_name, v*_low, v*_high).",
        "written_by": "scripts/build_feynman_catalog.py (Kepler Lab). Formulas and ranges are the CSV's; titles, contexts, variable descriptions and units are ours.",
        "csv_rows": f"{EXPECTED_ROWS} equation rows; the file also ends with {blank_rows} blank rows, which are ignored.",
        "units_note": "Units name the physical quantity each variable stands for (SI). As in the AI Feynman database, physical constants (G, c, h, k_B, epsilon_0, g) are inputs with sampling ranges, and all ranges are numbers of order one rather than physical magnitudes.",
        "sampling_protocol": [
            "Each task has a seed, zlib.crc32 of its file name ('seed'). In-domain points come from NumPy's PCG64 generator seeded with [seed, 0], out-of-domain points from one seeded with [seed, 1].",
            f"train ({fy.N_TRAIN}) and test_id ({fy.N_TEST_ID}): every input uniform on its published range [low, high); the first {fy.N_TRAIN} accepted points are train, the next {fy.N_TEST_ID} test_id.",
            f"test_ood ({fy.N_TEST_OOD}): {fy.OOD_RULE}. Extrapolating upwards keeps every input's sign, so square roots, logarithms and arcsines stay valid wherever the formula allows. An entry with ood.rule = 'custom' uses its own box (ood.ranges) and says why (ood.reason); none needs one at present.",
            "A point whose target is not a finite real number (e.g. arcsin of a value beyond 1) is rejected and redrawn; quality.id_acceptance and quality.ood_acceptance are the fractions of each box that is valid.",
            "The target is the formula evaluated with engine.expr.compile_numpy on the whitelist-parsed formula.",
        ],
        "ood_rule": fy.OOD_RULE,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--output", type=Path, default=fy.CATALOG_PATH)
    args = parser.parse_args(argv)
    rows, blank = read_rows(args.csv)
    if len(rows) != EXPECTED_ROWS:
        raise SystemExit(f"expected {EXPECTED_ROWS} equations, found {len(rows)}")
    names = [r["Filename"].strip() for r in rows]
    if len(set(names)) != len(names) or set(names) != set(SPECS):
        raise SystemExit(f"CSV rows and SPECS differ: {sorted(set(names) ^ set(SPECS))}")
    start = time.perf_counter()
    entries = [build_entry(r) for r in rows]
    catalog = {"header": header(args.csv, blank), "entries": entries}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(catalog, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(entries)} equations to {args.output} ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
