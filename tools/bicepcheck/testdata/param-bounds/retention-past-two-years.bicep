// want: @maxValue(3650) accepts values above Azure's maximum 730
@minValue(30)
@maxValue(3650)
param logRetentionDays int = 30
