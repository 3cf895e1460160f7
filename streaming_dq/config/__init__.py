"""Declarative configuration: the check registry, the factory, CheckSet and YAML loading."""
