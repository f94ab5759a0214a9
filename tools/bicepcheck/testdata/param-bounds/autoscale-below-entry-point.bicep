// want: @minValue(400) accepts values below Azure's minimum 1000
@minValue(400)
param cosmosAutoscaleMaxThroughput int = 1000
