"""The coding bank's problems: one folder per problem (see ``rlprep.coding.bank``)."""
