"""The import engine both isolation modes share: importer, module names, import graph, discovery."""
