"""Classes whose methods run on another class's instances because it inherits them:
mixins found through the class hierarchy, not by their names."""
