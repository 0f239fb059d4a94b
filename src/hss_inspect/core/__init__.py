"""The ground floor: settings, options, taxonomy, packaged data, errors and roles."""
