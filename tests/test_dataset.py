"""The Dataset container and its numbered (LIBSVM) names."""
import pickle

import pytest

from omlc.io.dataset import NumberedNames


def test_numbered_names_behave_like_the_list_of_strings():
    names = NumberedNames(2, 7)
    as_list = [str(i) for i in range(2, 7)]
    assert len(names) == 5 and list(names) == as_list and names == as_list
    assert names[0] == "2" and names[-1] == "6" and names[1:3] == ["3", "4"]
    assert names[::2] == ["2", "4", "6"]
    assert "4" in names and "7" not in names and "04" not in names and 4 not in names
    assert names.index("5") == 3 and names.count("5") == 1
    with pytest.raises(ValueError):
        names.index("1")
    with pytest.raises(IndexError):
        names[5]
    assert names != ["2", "3"] and names == NumberedNames(2, 7) and NumberedNames(0, 0) == []
    assert pickle.loads(pickle.dumps(names)) == names
    assert names.tolist() == as_list


def test_numbered_names_cost_nothing_per_name():
    names = NumberedNames(0, 2**31 - 1)
    assert len(names) == 2**31 - 1 and names[-1] == "2147483646"
    assert names.index("2147483646") == 2**31 - 2
