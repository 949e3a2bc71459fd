package registry

// PackageOf is packageOf, for the tests of package registry_test.
var PackageOf = packageOf
