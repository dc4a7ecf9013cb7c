import pytest

from idem_client import TaskKey


def test_key_parts_and_parse():
    key = TaskKey("tenant-7", "charge", "order:123:with colons é")
    assert str(key) == "tenant-7:charge:order:123:with colons é"
    assert TaskKey.parse(str(key)) == key
    assert TaskKey.parse("a:b:c").business_id == "c"
    with pytest.raises(AttributeError):
        key.tenant = "x"


@pytest.mark.parametrize("parts,message", [
    (("", "op", "id"), "task key tenant is empty"),
    (("t", "", "id"), "task key operation is empty"),
    (("t", "op", ""), "task key business id is empty"),
    (("t" * 65, "op", "id"), "task key tenant is 65 bytes, longer than the limit of 64"),
    (("t", "op", "x" * 513), "task key business id is 513 bytes, longer than the limit of 512"),
    (("t:x", "op", "id"), "task key tenant must not contain ':'"),
    (("t", "o p", "id"), "task key operation may hold only visible ASCII characters"),
    (("t\u00e9", "op", "id"), "byte 1 is not: 't\\xc3\\xa9'"),
    (("t", "op", "a\0b"), "task key business id contains a NUL byte at offset 1"),
    (("t", "op", "a\ud800"), "task key business id is not valid UTF-8"),
    (("t", "op", b"\xff"), "task key business id is not valid UTF-8"),
])
def test_key_rules_as_core_key(parts, message):
    with pytest.raises(ValueError) as e:
        TaskKey(*parts)
    assert message in str(e.value)


def test_parse_needs_two_colons():
    with pytest.raises(ValueError) as e:
        TaskKey.parse("tenant:op")
    assert "must have the form tenant:operation:business_id" in str(e.value)
