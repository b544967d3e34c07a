"""linksim's version, in a module of its own so that the core reads it without importing the
package's front (which imports the method registry)."""

__version__ = "0.1.0"
