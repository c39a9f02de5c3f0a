"""The rule engine: fact catalogue, flattening, conditions, rules, evaluation, recommender."""
