from studio.core.chain.builtins import BUILTIN_STUDIO_RULES
from studio.core.chain.shape_keys import STUDIO_TOKEN_ESTIMATE, STUDIO_TRIM_PAIRS
from studio.core.chain.studio_rules import all_studio_rules, find_studio_rule


def test_every_rule_is_listed_once_with_its_text():
    rules = all_studio_rules()
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids))
    assert all(r.id.startswith("pleach.studio.") and r.text and r.source for r in rules)


def test_the_built_in_hooks_give_the_text_of_the_rules_they_apply():
    precise = {r.id: r.text for r in BUILTIN_STUDIO_RULES}
    for rule_id in (STUDIO_TOKEN_ESTIMATE, STUDIO_TRIM_PAIRS):
        assert find_studio_rule(rule_id).text == precise[rule_id]


def test_an_unknown_id_is_not_a_studio_rule():
    assert find_studio_rule("adf.request.1") is None
