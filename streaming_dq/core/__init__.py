"""Contracts every check, result and consumer builds on."""
