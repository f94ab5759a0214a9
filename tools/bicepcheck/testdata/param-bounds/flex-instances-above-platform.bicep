// want: @maxValue(2000) accepts values above Azure's maximum 1000
@minValue(40)
@maxValue(2000)
param flexMaximumInstanceCount int = 100
