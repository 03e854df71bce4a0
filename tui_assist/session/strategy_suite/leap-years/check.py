import calendar

from calendar_utils import days_in_month

for year in range(1890, 2111):
    for month in range(1, 13):
        assert days_in_month(year, month) == calendar.monthrange(year, month)[1], (year, month)
