"""THIRD-PARTY-NOTICES.txt: every bundled distribution, its licence, and the LGPL for Qt."""

from __future__ import annotations

import importlib.metadata as metadata
import re

import pytest


@pytest.fixture(scope="module")
def text(notices, speclib):
    return notices.render(speclib.bundled_distributions())


def row(text: str, name: str) -> str:
    for line in text.splitlines():
        if line.split(" ", 1)[0] == name:
            return line
    raise AssertionError(f"no row for {name}")


def test_pyside6_is_listed_under_the_lgpl_with_the_full_texts(text):
    pyside = metadata.distribution("PySide6_Essentials")
    line = row(text, pyside.metadata["Name"])
    assert pyside.version in line and "LGPL-3.0" in line
    assert "shiboken6" in text
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in text and "Version 3, 29 June 2007" in text
    assert "GNU GENERAL PUBLIC LICENSE" in text
    assert "0. Additional Definitions." in text  # the body of the LGPL, not only its title
    # the obligations note says where the replaceable Qt libraries are
    assert "_internal/PySide6/Qt/lib/libQt6" in text


def test_every_runtime_dependency_is_listed_with_its_version(text, speclib):
    for name in speclib.runtime_closure():
        if name.lower() == "keplerlab":
            continue
        assert f"{name} " in text, name
        assert metadata.version(name) in row(text, name), name


def test_licences_come_from_the_metadata_and_licence_files(text):
    assert "BSD" in row(text, "vtk")
    assert "MIT" in row(text, "POT")
    numpy = metadata.distribution("numpy")
    assert "BSD-3-Clause" in row(text, "numpy")
    # numpy's own LICENSE.txt is reproduced (BSD asks for its copyright notice)
    licence = (numpy.locate_file(f"numpy-{numpy.version}.dist-info/licenses/LICENSE.txt")).read_text()
    assert licence.strip().splitlines()[0] in text
    assert "Python Software Foundation" in text  # CPython's licence: the bundle carries it


def test_gpl_packages_are_called_out(text):
    if "tigramite" in text:
        assert re.search(r"tigramite is\s+under the GNU GPL", text)


def test_output_is_deterministic_and_written(notices, speclib, tmp_path):
    names = speclib.bundled_distributions()
    path = notices.write_notices(tmp_path / "N.txt", names, ["libz.so.1  (from /lib/libz.so.1)"])
    assert path.read_text() == notices.render(names, ["libz.so.1  (from /lib/libz.so.1)"])
    assert "libz.so.1" in path.read_text()
    assert "Kepler Lab 0.1.0" in path.read_text().splitlines()[0]


def test_list_option_prints_one_line_per_distribution(notices, capsys):
    assert notices.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("PySide6_Essentials\t") and "LGPL" in line for line in lines)
    assert all(line.count("\t") == 2 for line in lines)


def test_licence_of_prefers_the_spdx_expression(notices):
    from email.message import Message

    md = Message()
    md["License-Expression"] = "Apache-2.0"
    md["License"] = "long text\nmore"
    assert notices.licence_of(md) == "Apache-2.0"
    md = Message()
    md["Classifier"] = "License :: OSI Approved :: MIT License"
    assert notices.licence_of(md) == "MIT License"
    assert notices.licence_of(Message()) == "not stated"
